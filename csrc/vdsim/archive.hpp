// A small binary archive of the env cores' whole state (their pickling: bind_env_core.hpp).
// Standalone (the standard library only): tests/cpp/test_archive.cpp exercises it alone.
//
// Each class holding state lists its data members once, in one member template
//
//   template <class Ar> void archive(Ar& ar) { ar(a_, b_, c_); ar.skip(scratch_); }
//
// that every archive runs: Writer (save: the bytes), Reader (load: the same members read
// back in the same order) and Layout (the check and fingerprint of the lists, below).
// `ar.skip(m)` names a member that is not written, with its rule stated where it is
// listed: scratch that a copy starts without, a mutex, a pointer into the object that the
// archive function rebinds after reading (`if constexpr (Ar::kReading) ...`, as the copy
// constructors rebind).
//
// What a member may be: an arithmetic value or an enum (their bytes as they are: the
// same bits back, NaN payloads and signed zeros included), a C array or std::array, a
// std::vector, std::deque (ring buffers are written as their vectors and indices), a
// std::string, std::pair, std::optional, std::atomic (its value), a class with its own
// archive(), and a std::shared_ptr to one of these (the pointee, written once per blob:
// later pointers to it write its number, and read back as one shared object, so pointers
// that shared a pointee within a core still share one after a load; sharing between
// cores is not state). A raw pointer or a unique_ptr does not compile unless skipped.
//
// Every class value is preceded by a 4-byte tag of its type: a blob read as another type
// fails at the first class rather than reading its bytes as garbage. save() frames the
// payload with a header: a magic, the format version, the layout fingerprint of the root
// type, its name, the build that wrote it, the payload's length and a checksum of the
// header and payload; load() checks the magic, the format, the length, the checksum, the
// type and the fingerprint, in that order, and throws std::invalid_argument naming the
// cause (not an archive, another format, a truncated or corrupted blob, another type,
// another build's layout), as it does for anything unexpected while reading. A load that throws leaves the object partly read:
// load into a fresh object (the pickling does).
//
// Forgotten members: Layout walks an object's archive() and checks that the members it
// lists cover the object's bytes (sorted by address: every gap must be exactly the
// padding the next member's alignment needs, and the tail the class's own; a polymorphic
// class's vtable pointer is allowed first), recursing into every class type reached
// (class members, and a default-constructed element or pointee for containers and shared
// pointers). save() and load() refuse to run for a root type whose walk found a problem
// (std::logic_error naming the class and the bytes not listed). A member small enough to
// sit in the padding before a more aligned one (a bool before a double) cannot be told
// from padding: tests/test_core_pickle.py's bit-for-bit runs catch those by behaviour.
// The same walk hashes every class's name, size, alignment and members (offset, size,
// type; containers by their element types): the layout fingerprint in the header, so a
// blob from a build whose layout differs is refused.
//
// Not portable: native byte order and sizes, for the build that wrote it (the header
// records its git sha for the error message).
#pragma once
#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace vdsim::blob {

constexpr uint32_t kFormatVersion = 1;
constexpr char kMagic[8] = {'V', 'D', 'S', 'I', 'M', 'A', 'R', 'C'};

// ---------------------------------------------------------------- type names, hashes

// The name of T as the compiler spells it (GCC and Clang: from __PRETTY_FUNCTION__).
template <class T>
const std::string& type_name() {
  static const std::string name = [](const std::string& s) {
    size_t b = s.find("T = ");
    if (b == std::string::npos) return s;
    b += 4;
    size_t e = s.find("; ", b);
    if (e == std::string::npos) e = s.rfind(']');
    if (e == std::string::npos || e < b) e = s.size();
    return s.substr(b, e - b);
  }(__PRETTY_FUNCTION__);
  return name;
}

inline uint64_t fnv1a(std::string_view s, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}
inline uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

// The tag written before every value of class T.
template <class T>
uint32_t type_tag() {
  static const uint32_t tag = [] {
    const uint64_t h = fnv1a(type_name<T>());
    return static_cast<uint32_t>(h ^ (h >> 32));
  }();
  return tag;
}

// The payload's checksum: four independent word lanes (fast), then the tail bytes.
inline uint64_t checksum(const char* data, size_t n) {
  constexpr uint64_t kMul = 0x9FB21C651E98DF25ull;
  uint64_t lane[4] = {0x243F6A8885A308D3ull ^ n, 0x13198A2E03707344ull, 0xA4093822299F31D0ull,
                      0x082EFA98EC4E6C89ull};
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 4; ++k) {
      uint64_t w;
      std::memcpy(&w, data + i + 8 * k, 8);
      lane[k] = (lane[k] ^ w) * kMul;
      lane[k] ^= lane[k] >> 29;
    }
  }
  uint64_t h = mix(mix(lane[0], lane[1]), mix(lane[2], lane[3]));
  for (; i < n; ++i) h = (h ^ static_cast<unsigned char>(data[i])) * 0x100000001b3ull;
  return mix(h, n);
}

// ---------------------------------------------------------------- type traits

namespace detail {
template <class T> struct dependent_false : std::false_type {};
template <class T> struct is_vector : std::false_type {};
template <class E, class A> struct is_vector<std::vector<E, A>> : std::true_type {};
template <class T> struct is_deque : std::false_type {};
template <class E, class A> struct is_deque<std::deque<E, A>> : std::true_type {};
template <class T> struct is_std_array : std::false_type {};
template <class E, size_t N> struct is_std_array<std::array<E, N>> : std::true_type {};
template <class T> struct is_string : std::false_type {};
template <class C, class Tr, class A>
struct is_string<std::basic_string<C, Tr, A>> : std::true_type {};
template <class T> struct is_pair : std::false_type {};
template <class A, class B> struct is_pair<std::pair<A, B>> : std::true_type {};
template <class T> struct is_optional : std::false_type {};
template <class E> struct is_optional<std::optional<E>> : std::true_type {};
template <class T> struct is_atomic : std::false_type {};
template <class E> struct is_atomic<std::atomic<E>> : std::true_type {};
template <class T> struct is_shared_ptr : std::false_type {};
template <class E> struct is_shared_ptr<std::shared_ptr<E>> : std::true_type {};
template <class T> struct is_unique_ptr : std::false_type {};
template <class E, class D> struct is_unique_ptr<std::unique_ptr<E, D>> : std::true_type {};

// Whether T lists its members: t.archive(ar).
template <class T, class Ar, class = void>
struct has_archive : std::false_type {};
template <class T, class Ar>
struct has_archive<T, Ar, std::void_t<decltype(std::declval<T&>().archive(std::declval<Ar&>()))>>
    : std::true_type {};

// Values written as their bytes.
template <class T>
constexpr bool is_plain = std::is_arithmetic_v<T> || std::is_enum_v<T>;
}  // namespace detail

// ---------------------------------------------------------------- Writer

class Writer {
 public:
  static constexpr bool kReading = false;

  template <class... T>
  void operator()(const T&... v) { (put(v), ...); }
  template <class... T>
  void skip(const T&...) {}

  // One value (a root object, or anything the list above allows).
  template <class T>
  void value(const T& v) { put(v); }
  std::string& bytes() { return out_; }

 private:
  void raw(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  void size(size_t n) {
    const uint64_t v = n;
    raw(&v, sizeof v);
  }

  template <class T>
  void put(const T& v) {
    using namespace detail;
    if constexpr (std::is_same_v<T, bool>) {
      const uint8_t b = v ? 1 : 0;
      raw(&b, 1);
    } else if constexpr (is_plain<T>) {
      raw(&v, sizeof v);
    } else if constexpr (std::is_array_v<T>) {
      if constexpr (is_plain<std::remove_all_extents_t<T>> &&
                    !std::is_same_v<std::remove_all_extents_t<T>, bool>)
        raw(&v, sizeof v);
      else
        for (const auto& e : v) put(e);
    } else if constexpr (is_std_array<T>::value) {
      using E = typename T::value_type;
      if constexpr (is_plain<E> && !std::is_same_v<E, bool>) raw(v.data(), sizeof(E) * v.size());
      else for (const auto& e : v) put(e);
    } else if constexpr (is_vector<T>::value) {
      using E = typename T::value_type;
      static_assert(!std::is_same_v<E, bool>, "std::vector<bool>: not archived");
      size(v.size());
      if constexpr (is_plain<E>) {
        if (!v.empty()) raw(v.data(), sizeof(E) * v.size());
      } else {
        for (const auto& e : v) put(e);
      }
    } else if constexpr (is_deque<T>::value) {
      size(v.size());
      for (const auto& e : v) put(e);
    } else if constexpr (is_string<T>::value) {
      size(v.size());
      raw(v.data(), v.size() * sizeof(typename T::value_type));
    } else if constexpr (is_pair<T>::value) {
      put(v.first);
      put(v.second);
    } else if constexpr (is_optional<T>::value) {
      put(v.has_value());
      if (v) put(*v);
    } else if constexpr (is_atomic<T>::value) {
      put(v.load(std::memory_order_acquire));
    } else if constexpr (is_shared_ptr<T>::value) {
      if (!v) {
        size(0);
        return;
      }
      const auto [it, fresh] =
          shared_.emplace(static_cast<const void*>(v.get()), shared_.size() + 1);
      size(it->second);
      if (fresh) put(*v);
    } else if constexpr (is_unique_ptr<T>::value || std::is_pointer_v<T>) {
      static_assert(dependent_false<T>::value,
                    "a pointer member: skip it (ar.skip) and rebind it after reading, or "
                    "state it as scratch");
    } else if constexpr (has_archive<T, Writer>::value) {
      const uint32_t tag = type_tag<T>();
      raw(&tag, sizeof tag);
      const_cast<T&>(v).archive(*this);  // writing changes nothing
    } else {
      static_assert(dependent_false<T>::value,
                    "this type has no archive(): list its members in "
                    "`template <class Ar> void archive(Ar& ar)`");
    }
  }

  std::string out_;
  std::unordered_map<const void*, uint64_t> shared_;  // pointee -> its number (1, 2, ..)
};

// ---------------------------------------------------------------- Reader

class Reader {
 public:
  static constexpr bool kReading = true;

  Reader(const char* data, size_t n) : data_(data), n_(n) {}
  template <class... T>
  void operator()(T&... v) { (get(v), ...); }
  template <class... T>
  void skip(T&...) {}

  template <class T>
  void value(T& v) { get(v); }
  size_t offset() const { return pos_; }
  size_t remaining() const { return n_ - pos_; }
  // Everything read: trailing bytes are an error (a blob of something longer).
  void finish() const {
    if (pos_ != n_)
      fail(std::to_string(n_ - pos_) + " bytes left over after the state: the blob is not "
           "one of this type, or is corrupted");
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument("vdsim archive: " + what + " (at payload byte " +
                                std::to_string(pos_) + " of " + std::to_string(n_) + ")");
  }

 private:
  void raw(void* p, size_t n, const std::string& what) {
    if (n > n_ - pos_)
      fail("truncated blob: " + std::to_string(n) + " bytes needed for " + what + ", " +
           std::to_string(n_ - pos_) + " left");
    if (n > 0) std::memcpy(p, data_ + pos_, n);
    pos_ += n;
  }
  // A count of elements, each taking at least min_bytes: one that cannot fit in the bytes
  // left is refused before anything is allocated for it.
  size_t count(size_t min_bytes, const std::string& what) {
    uint64_t v;
    raw(&v, sizeof v, "the length of " + what);
    if (v > (n_ - pos_) / std::max<size_t>(min_bytes, 1))
      fail("truncated or corrupted blob: " + what + " of " + std::to_string(v) +
           " elements does not fit in the " + std::to_string(n_ - pos_) + " bytes left");
    return static_cast<size_t>(v);
  }

  template <class T>
  void get(T& v) {
    using namespace detail;
    if constexpr (std::is_same_v<T, bool>) {
      uint8_t b;
      raw(&b, 1, "a bool");
      if (b > 1) fail("corrupted blob: a bool holds " + std::to_string(b));
      v = b != 0;
    } else if constexpr (is_plain<T>) {
      raw(&v, sizeof v, type_name<T>());
    } else if constexpr (std::is_array_v<T>) {
      if constexpr (is_plain<std::remove_all_extents_t<T>> &&
                    !std::is_same_v<std::remove_all_extents_t<T>, bool>)
        raw(&v, sizeof v, type_name<T>());
      else
        for (auto& e : v) get(e);
    } else if constexpr (is_std_array<T>::value) {
      using E = typename T::value_type;
      if constexpr (is_plain<E> && !std::is_same_v<E, bool>)
        raw(v.data(), sizeof(E) * v.size(), type_name<T>());
      else
        for (auto& e : v) get(e);
    } else if constexpr (is_vector<T>::value) {
      using E = typename T::value_type;
      if constexpr (is_plain<E>) {
        v.resize(count(sizeof(E), type_name<T>()));
        if (!v.empty()) raw(v.data(), sizeof(E) * v.size(), type_name<T>());
      } else {
        const size_t n = count(min_size<E>(), type_name<T>());
        v.clear();
        v.resize(n);
        for (auto& e : v) get(e);
      }
    } else if constexpr (is_deque<T>::value) {
      using E = typename T::value_type;
      const size_t n = count(min_size<E>(), type_name<T>());
      v.clear();
      for (size_t i = 0; i < n; ++i) {
        E e{};
        get(e);
        v.push_back(std::move(e));
      }
    } else if constexpr (is_string<T>::value) {
      using C = typename T::value_type;
      v.resize(count(sizeof(C), "a string"));
      raw(v.data(), v.size() * sizeof(C), "a string");
    } else if constexpr (is_pair<T>::value) {
      get(v.first);
      get(v.second);
    } else if constexpr (is_optional<T>::value) {
      bool has;
      get(has);
      if (has) {
        v.emplace();
        get(*v);
      } else {
        v.reset();
      }
    } else if constexpr (is_atomic<T>::value) {
      typename T::value_type x;
      get(x);
      v.store(x, std::memory_order_release);
    } else if constexpr (is_shared_ptr<T>::value) {
      using E = std::remove_cv_t<typename T::element_type>;
      uint64_t id;
      raw(&id, sizeof id, "a shared pointer");
      if (id == 0) {
        v.reset();
      } else if (id <= shared_.size()) {  // one read before: the same object
        const Shared& s = shared_[static_cast<size_t>(id - 1)];
        if (s.tag != type_tag<E>())
          fail("corrupted blob: shared object " + std::to_string(id) + " is not a " +
               type_name<E>());
        v = std::static_pointer_cast<E>(s.object);
      } else if (id == shared_.size() + 1) {
        auto p = std::make_shared<E>();
        shared_.push_back({type_tag<E>(), p});  // numbered before its contents, as written
        get(*p);
        v = std::move(p);
      } else {
        fail("corrupted blob: shared object number " + std::to_string(id) + " after " +
             std::to_string(shared_.size()));
      }
    } else if constexpr (is_unique_ptr<T>::value || std::is_pointer_v<T>) {
      static_assert(dependent_false<T>::value, "a pointer member: skip it and rebind it");
    } else if constexpr (has_archive<T, Reader>::value) {
      uint32_t tag;
      raw(&tag, sizeof tag, "the tag of a " + type_name<T>());
      if (tag != type_tag<T>())
        fail("expected a " + type_name<T>() + " here, found another type's tag: the blob is "
             "corrupted or holds something else");
      v.archive(*this);
    } else {
      static_assert(dependent_false<T>::value, "this type has no archive()");
    }
  }
  // The fewest bytes a value of E takes in a blob (a class: its tag).
  template <class E>
  static constexpr size_t min_size() {
    if constexpr (detail::is_plain<E>) return sizeof(E);
    else if constexpr (detail::has_archive<E, Reader>::value) return sizeof(uint32_t);
    else return 1;
  }

  struct Shared {
    uint32_t tag;
    std::shared_ptr<void> object;
  };
  const char* data_;
  size_t n_;
  size_t pos_ = 0;
  std::vector<Shared> shared_;
};

// ---------------------------------------------------------------- Layout

// Walks a root object's archive() and every class type it reaches: checks that each
// class's listed members cover its bytes (problems(), one line each) and hashes the
// lists (fingerprint()). The result depends on the types only, not on the values.
class Layout {
 public:
  static constexpr bool kReading = false;

  template <class T>
  void root(T& obj) { fingerprint_ = mix(mix(kFormatVersion, sizeof(void*)), type_hash(&obj)); }
  uint64_t fingerprint() const { return fingerprint_; }
  const std::vector<std::string>& problems() const { return problems_; }

  template <class... T>
  void operator()(T&... v) { (member(v, false), ...); }
  template <class... T>
  void skip(T&... v) { (member(v, true), ...); }

 private:
  struct Range {
    uintptr_t begin, end;
    size_t align;
  };
  struct Frame {
    uintptr_t base;
    std::vector<Range> ranges;
    uint64_t hash;
  };

  template <class T>
  void member(T& v, bool skipped) {
    if (frames_.empty()) return;
    const uintptr_t at = reinterpret_cast<uintptr_t>(std::addressof(v));
    const size_t f = frames_.size() - 1;
    frames_[f].ranges.push_back({at, at + sizeof(T), alignof(T)});
    const uint64_t t = skipped ? fnv1a(type_name<T>()) : type_hash(std::addressof(v));
    Frame& fr = frames_[f];  // (type_hash may have grown frames_)
    fr.hash = mix(mix(mix(fr.hash, at - fr.base), sizeof(T)), mix(t, skipped ? 1 : 0));
  }

  // The hash of type T's layout; a class is walked once (on `obj`, else on a default
  // instance), its problems recorded.
  template <class T>
  uint64_t type_hash(T* obj) {
    using namespace detail;
    if constexpr (is_plain<T>) {
      return fnv1a(type_name<T>());
    } else if constexpr (std::is_array_v<T>) {
      using E = std::remove_extent_t<T>;
      return mix(mix(fnv1a("array"), std::extent_v<T>), type_hash<E>(obj ? &(*obj)[0] : nullptr));
    } else if constexpr (is_std_array<T>::value) {
      using E = typename T::value_type;
      return mix(mix(fnv1a("std::array"), std::tuple_size<T>::value),
                 type_hash<E>(obj && obj->size() > 0 ? obj->data() : nullptr));
    } else if constexpr (is_vector<T>::value || is_deque<T>::value || is_optional<T>::value ||
                         is_atomic<T>::value) {
      using E = typename T::value_type;
      return mix(fnv1a(is_vector<T>::value  ? "vector"
                       : is_deque<T>::value ? "deque"
                       : is_optional<T>::value ? "optional" : "atomic"),
                 type_hash<E>(nullptr));
    } else if constexpr (is_shared_ptr<T>::value) {
      return mix(fnv1a("shared_ptr"), type_hash<std::remove_cv_t<typename T::element_type>>(nullptr));
    } else if constexpr (is_string<T>::value) {
      return fnv1a(type_name<T>());
    } else if constexpr (is_pair<T>::value) {
      return mix(mix(fnv1a("pair"), type_hash<typename T::first_type>(nullptr)),
                 type_hash<typename T::second_type>(nullptr));
    } else if constexpr (has_archive<T, Layout>::value) {
      const std::string& name = type_name<T>();
      const auto known = done_.find(name);
      if (known != done_.end()) return known->second;
      if (obj) return walk(*obj);
      if constexpr (std::is_default_constructible_v<T>) {
        T tmp{};
        return walk(tmp);
      } else {
        return fnv1a(name);  // (not reached by the cores' types)
      }
    } else {
      return fnv1a(type_name<T>());  // pointers and other skipped members
    }
  }

  template <class T>
  uint64_t walk(T& obj) {
    const std::string& name = type_name<T>();
    done_[name] = fnv1a(name);  // a type that contains itself stops here
    const uintptr_t base = reinterpret_cast<uintptr_t>(std::addressof(obj));
    frames_.push_back({base, {}, mix(mix(fnv1a(name), sizeof(T)), alignof(T))});
    obj.archive(*this);
    Frame fr = std::move(frames_.back());
    frames_.pop_back();
    check<T>(fr);
    return done_[name] = mix(fr.hash, fr.ranges.size());
  }

  template <class T>
  void check(Frame& fr) {
    const std::string& name = type_name<T>();
    std::sort(fr.ranges.begin(), fr.ranges.end(),
              [](const Range& a, const Range& b) { return a.begin < b.begin; });
    auto up = [](uintptr_t x, size_t a) { return (x + a - 1) / a * a; };
    const uintptr_t end = fr.base + sizeof(T);
    // a polymorphic class starts with its vtable pointer (its bases hold no data here)
    uintptr_t cur = fr.base + (std::is_polymorphic_v<T> ? sizeof(void*) : 0);
    for (const Range& r : fr.ranges) {
      if (r.begin < fr.base || r.end > end) {
        problems_.push_back(name + "::archive lists something outside the object");
        continue;
      }
      if (r.begin < cur) {
        problems_.push_back(name + "::archive lists bytes [" + std::to_string(r.begin - fr.base) +
                            ", " + std::to_string(r.end - fr.base) + ") twice");
      } else if (r.begin != up(cur, r.align)) {
        problems_.push_back(name + "::archive does not list bytes [" +
                            std::to_string(cur - fr.base) + ", " +
                            std::to_string(r.begin - fr.base) +
                            ") of the object: a member missing from its list?");
      }
      cur = std::max(cur, r.end);
    }
    if (up(cur, alignof(T)) != end)
      problems_.push_back(name + "::archive does not list bytes [" + std::to_string(cur - fr.base) +
                          ", " + std::to_string(sizeof(T)) +
                          ") of the object: a member missing from its list?");
  }

  std::vector<Frame> frames_;
  std::unordered_map<std::string, uint64_t> done_;
  std::vector<std::string> problems_;
  uint64_t fingerprint_ = 0;
};

// The layout of root type T, walked once per process (on the first object given).
struct LayoutInfo {
  uint64_t fingerprint = 0;
  std::vector<std::string> problems;
};
template <class T>
const LayoutInfo& layout_of(T& obj) {
  static const LayoutInfo info = [&obj] {
    Layout l;
    l.root(obj);
    return LayoutInfo{l.fingerprint(), l.problems()};
  }();
  return info;
}
template <class T>
const LayoutInfo& checked_layout(T& obj) {
  const LayoutInfo& info = layout_of(obj);
  if (!info.problems.empty()) {
    std::string msg = "vdsim archive: the member lists of " + type_name<T>() +
                      " do not cover its state:";
    for (const std::string& p : info.problems) msg += "\n  " + p;
    throw std::logic_error(msg);
  }
  return info;
}

// ---------------------------------------------------------------- save, load

namespace detail {
inline void put_u32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
inline void put_u64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }
inline void put_str(std::string& s, std::string_view v) {
  put_u32(s, static_cast<uint32_t>(v.size()));
  s.append(v.data(), v.size());
}
// The header's fields in order, each checked for length.
class HeaderReader {
 public:
  explicit HeaderReader(std::string_view b) : b_(b) {}
  template <class T>
  T num() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, b_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string_view str() {
    const uint32_t n = num<uint32_t>();
    need(n);
    const std::string_view s = b_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  size_t pos() const { return pos_; }

 private:
  void need(size_t n) const {
    if (n > b_.size() - pos_)
      throw std::invalid_argument("vdsim archive: truncated blob: its header is cut short (" +
                                  std::to_string(b_.size()) + " bytes)");
  }
  std::string_view b_;
  size_t pos_ = 0;
};
}  // namespace detail

// The blob of `obj`: header, then its archive() payload. `build` names the build that
// writes it (its git sha), for the message of a build that cannot read it.
template <class T>
std::string save(const T& obj, std::string_view build) {
  const LayoutInfo& layout = checked_layout(const_cast<T&>(obj));
  Writer w;
  w.bytes().reserve(4096);
  w.value(obj);
  const std::string& payload = w.bytes();
  std::string out;
  out.reserve(payload.size() + 128);
  out.append(kMagic, sizeof kMagic);
  detail::put_u32(out, kFormatVersion);
  detail::put_u64(out, layout.fingerprint);
  detail::put_str(out, type_name<T>());
  detail::put_str(out, build);
  detail::put_u64(out, payload.size());
  detail::put_u64(out, mix(checksum(out.data(), out.size()),
                           checksum(payload.data(), payload.size())));
  out += payload;
  return out;
}

// Reads a blob of save() into `obj` (a fresh object of T: whatever it held is replaced,
// and is left partly read should this throw). std::invalid_argument names what is wrong
// with the blob.
template <class T>
void load(T& obj, std::string_view blob, std::string_view build) {
  const LayoutInfo& layout = checked_layout(obj);
  if (blob.size() < sizeof kMagic || std::memcmp(blob.data(), kMagic, sizeof kMagic) != 0)
    throw std::invalid_argument(
        "vdsim archive: not a vdsim state blob (it does not start with the archive's magic "
        "bytes): the data is not what pickling a vdsim env core gives, or it is corrupted");
  detail::HeaderReader h(blob.substr(sizeof kMagic));
  const uint32_t format = h.num<uint32_t>();
  if (format != kFormatVersion)
    throw std::invalid_argument("vdsim archive: the blob is of archive format " +
                                std::to_string(format) + "; this build reads format " +
                                std::to_string(kFormatVersion));
  const uint64_t fingerprint = h.num<uint64_t>();
  const std::string_view type = h.str();
  const std::string_view writer = h.str();
  const uint64_t size = h.num<uint64_t>();
  const size_t summed = sizeof kMagic + h.pos();  // the header up to its checksum
  const uint64_t sum = h.num<uint64_t>();
  const size_t start = sizeof kMagic + h.pos();
  const size_t have = blob.size() - start;
  if (size > have)
    throw std::invalid_argument("vdsim archive: truncated blob: its state has " +
                                std::to_string(size) + " bytes, " + std::to_string(have) +
                                " are present");
  if (size < have)
    throw std::invalid_argument("vdsim archive: " + std::to_string(have - size) +
                                " bytes after the end of the blob's state");
  const char* payload = blob.data() + start;
  if (mix(checksum(blob.data(), summed), checksum(payload, static_cast<size_t>(size))) != sum)
    throw std::invalid_argument(
        "vdsim archive: corrupted blob: its checksum does not match its contents");
  if (type != type_name<T>())
    throw std::invalid_argument("vdsim archive: the blob holds a " + std::string(type) +
                                ", not a " + type_name<T>());
  if (fingerprint != layout.fingerprint)
    throw std::invalid_argument(
        "vdsim archive: the blob was written by a build whose " + type_name<T>() +
        " has another layout (written by build " + std::string(writer) + ", this is build " +
        std::string(build) + "): pickled state does not move between builds");
  Reader r(payload, static_cast<size_t>(size));
  r.value(obj);
  r.finish();
}

}  // namespace vdsim::blob
