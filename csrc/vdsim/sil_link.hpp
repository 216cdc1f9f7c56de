// The SIL transports (docs/SIL.md): UDP (UdpLink) and shared memory (ShmLink).
//
// Shared memory: one POSIX shared-memory
// region with a sequence-locked slot per direction, each holding the newest message of
// the wire format. The simulator creates the region (mode 0600: the same user only) and
// removes its name when done; a controller opens it by name.
//
// Region (little-endian): a 64-byte header (magic "VDSM", u16 version, u16 0, u32 slot
// capacity, u32 creator pid), then two slots of kSlotStride bytes: simulator -> controller
// at offset 64, controller -> simulator after it. A slot: u32 seq (even: stable, odd: being
// written; also the futex word a sleeping reader waits on), u32 waiters (nonzero: wake
// the reader), u32 length, u32 writer pid, then the message bytes.
//
// A writer takes the slot by moving seq from even to odd (compare-and-swap: two
// controllers writing at once cannot interleave), copies the message, makes seq even
// again and wakes a sleeping reader. A reader copies the message and keeps it only if seq
// was the same even value before and after. A slot holds one message: one written before
// the previous was read replaces it (the protocol never needs more: one command answers
// one observation).
#pragma once
#include <atomic>
#include <cerrno>
#include <functional>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#if defined(__linux__)
#include <linux/futex.h>
#endif
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace vdsim {

// A SIL transport: whole messages out and in, each with its sender's address (UDP: the
// IPv4 address and port packed as ip << 16 | port; shared memory: the writer's pid).
class SilLink {
 public:
  virtual ~SilLink() = default;
  // Sends a message to `to` (UDP; shared memory has one peer and ignores it).
  virtual void send_to(const unsigned char* data, size_t n, uint64_t to) = 0;
  // The next message's length (its bytes in buf, at most cap; a longer one reads as cap
  // + 1 bytes: malformed) and sender; -1 when none came within timeout_s seconds, -2 when
  // stop() said so (asked between waits of at most 50 ms). Polls for spin_s seconds,
  // yielding the CPU between polls, before it sleeps.
  virtual long recv_from(unsigned char* buf, size_t cap, double timeout_s, double spin_s,
                         uint64_t& from, const std::function<bool()>& stop) = 0;
};

class ShmLink final : public SilLink {
 public:
  static constexpr uint16_t kVersion = 1;
  static constexpr size_t kHeader = 64;
  static constexpr size_t kSlotHead = 16;
  static constexpr size_t kSlotStride = 8256;  // 129 cache lines
  static constexpr size_t kCapacity = kSlotStride - kSlotHead;  // >= 28 + 8 * 1024
  static constexpr size_t kSize = kHeader + 2 * kSlotStride;

  // A name is 1..200 of [A-Za-z0-9_.-], not starting with '.'; std::invalid_argument else.
  static void check_name(const std::string& name) {
    bool ok = !name.empty() && name.size() <= 200 && name[0] != '.';
    for (char c : name)
      ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == '-');
    if (!ok)
      throw std::invalid_argument("shared-memory name '" + name +
                                  "' must be 1 to 200 letters, digits, '_', '.' or '-', not "
                                  "starting with '.'");
  }

  // create: the simulator's side (the region must not exist); else a controller's, which
  // opens an existing region and checks its header. std::runtime_error names the cause.
  ShmLink(const std::string& name, bool create) : name_(name), create_(create) {
    check_name(name);
    const std::string path = "/" + name;
    int fd = create ? shm_open(path.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600)
                    : shm_open(path.c_str(), O_RDWR, 0);
    if (fd < 0) {
      const int err = errno;
      if (create && err == EEXIST)
        throw std::runtime_error("shared memory '" + name + "' exists (/dev/shm/" + name +
                                 "): another server uses it, or a killed one left it; choose "
                                 "another name or remove /dev/shm/" + name);
      if (!create && err == ENOENT)
        throw std::runtime_error("no shared memory '" + name + "' (/dev/shm/" + name +
                                 "): start the server (vdsim-gym serve --shm " + name +
                                 ") first");
      throw std::runtime_error("cannot open shared memory '" + name + "': " +
                               std::strerror(err));
    }
    if (create && ftruncate(fd, static_cast<off_t>(kSize)) != 0) {
      const int err = errno;
      close(fd);
      shm_unlink(path.c_str());
      throw std::runtime_error("cannot size shared memory '" + name + "': " +
                               std::strerror(err));
    }
    struct stat st {};
    if (!create && (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < kSize)) {
      close(fd);
      throw std::runtime_error("shared memory '" + name + "' is not a VDSim SIL region "
                               "(too small)");
    }
    void* p = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
      const int err = errno;
      if (create) shm_unlink(path.c_str());
      throw std::runtime_error("cannot map shared memory '" + name + "': " +
                               std::strerror(err));
    }
    base_ = static_cast<unsigned char*>(p);
    const uint32_t cap = static_cast<uint32_t>(kCapacity);
    if (create) {  // fresh zeros from ftruncate: the header, then both slots at seq 0
      const uint32_t pid = static_cast<uint32_t>(getpid());
      std::memcpy(base_ + 8, &cap, 4);
      std::memcpy(base_ + 12, &pid, 4);
      std::memcpy(base_ + 4, &kVersion, 2);
      std::atomic_thread_fence(std::memory_order_release);
      std::memcpy(base_, "VDSM", 4);
    } else {
      uint16_t version = 0;
      uint32_t got_cap = 0;
      std::memcpy(&version, base_ + 4, 2);
      std::memcpy(&got_cap, base_ + 8, 4);
      if (std::memcmp(base_, "VDSM", 4) != 0 || version != kVersion || got_cap != cap) {
        munmap(base_, kSize);
        base_ = nullptr;
        throw std::runtime_error("shared memory '" + name + "' is not a VDSim SIL region "
                                 "of version 1 (magic, version or slot size differ)");
      }
    }
    // The simulator writes slot 0 and reads slot 1; a controller the other way round.
    out_ = slot(create ? 0 : 1);
    in_ = slot(create ? 1 : 0);
    last_in_ = seq(in_).load(std::memory_order_acquire) & ~1u;
  }
  ~ShmLink() override { close_link(); }
  ShmLink(const ShmLink&) = delete;
  ShmLink& operator=(const ShmLink&) = delete;

  // Unmaps the region; the simulator's side removes its name too. Idempotent.
  void close_link() {
    if (base_ == nullptr) return;
    munmap(base_, kSize);
    base_ = nullptr;
    if (create_) shm_unlink(("/" + name_).c_str());
  }
  bool closed() const { return base_ == nullptr; }
  const std::string& name() const { return name_; }

  // Writes a message (at most kCapacity bytes) to this side's outgoing slot.
  void send_to(const unsigned char* data, size_t n, uint64_t /*to*/) override {
    check_open();
    if (n > kCapacity) throw std::invalid_argument("message longer than the slot");
    std::atomic<uint32_t>& s = seq(out_);
    uint32_t v = s.load(std::memory_order_relaxed);
    for (;;) {  // take the slot: even -> odd
      if ((v & 1u) == 0 &&
          s.compare_exchange_weak(v, v + 1, std::memory_order_acquire,
                                  std::memory_order_relaxed))
        break;
      pause();
      v = s.load(std::memory_order_relaxed);
    }
    std::atomic_thread_fence(std::memory_order_release);  // seq odd before the bytes
    const uint32_t len = static_cast<uint32_t>(n), pid = static_cast<uint32_t>(getpid());
    std::memcpy(out_ + 8, &len, 4);
    std::memcpy(out_ + 12, &pid, 4);
    std::memcpy(out_ + kSlotHead, data, n);
    s.store(v + 2, std::memory_order_seq_cst);
    if (waiters(out_).load(std::memory_order_seq_cst) != 0) wake(&s);
  }

  // The next message in the incoming slot (a new, stable seq): its length (bytes in
  // buf, at most cap; a length field beyond the slot reads as kCapacity + 1: malformed)
  // and writer pid; -1 when none came by the deadline. Spins for spin_s seconds, then
  // sleeps on the slot's futex in slices of at most 50 ms, calling stop() between them
  // (true: return -2).
  long recv_from(unsigned char* buf, size_t cap, double timeout_s, double spin_s,
                 uint64_t& from, const std::function<bool()>& stop) override {
    check_open();
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const auto deadline = start + seconds(timeout_s);
    const auto spin_end = start + seconds(spin_s < timeout_s ? spin_s : timeout_s);
    std::atomic<uint32_t>& s = seq(in_);
    for (unsigned i = 0;; ++i) {
      const uint32_t v1 = s.load(std::memory_order_acquire);
      if (v1 != last_in_ && (v1 & 1u) == 0) {
        uint32_t len = 0, writer = 0;
        std::memcpy(&len, in_ + 8, 4);
        std::memcpy(&writer, in_ + 12, 4);
        from = writer;
        const size_t n = len > kCapacity ? kCapacity + 1 : len;  // too long: malformed
        const size_t copy = n < cap ? n : cap;
        std::memcpy(buf, in_ + kSlotHead, copy < kCapacity ? copy : kCapacity);
        std::atomic_thread_fence(std::memory_order_acquire);
        if (s.load(std::memory_order_relaxed) == v1) {
          last_in_ = v1;
          return static_cast<long>(n);
        }
        continue;  // written meanwhile: read again
      }
      if ((i & 63u) != 63u) {
        pause();
        continue;
      }
      std::this_thread::yield();  // a writer on this core runs now, not after our slice
      const auto now = Clock::now();
      if (now >= deadline) return -1;
      if (now < spin_end) continue;
      // Sleep on seq until it changes (the writer wakes us), the deadline, or 50 ms.
      const double left = std::chrono::duration<double>(deadline - now).count();
      const double nap = left < 0.05 ? left : 0.05;
      timespec ts{static_cast<time_t>(nap), static_cast<long>((nap - static_cast<time_t>(nap)) * 1e9)};
      waiters(in_).store(1, std::memory_order_seq_cst);
      if (s.load(std::memory_order_seq_cst) == v1) wait(&s, v1, ts);
      waiters(in_).store(0, std::memory_order_relaxed);
      if (stop && stop()) return -2;
    }
  }

 private:
  static std::chrono::steady_clock::duration seconds(double s) {
    if (!(s > 0)) return std::chrono::steady_clock::duration::zero();
    if (s > 1e6) s = 1e6;  // a wait is bounded (and the conversion cannot overflow)
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(s));
  }
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#else
    std::this_thread::yield();
#endif
  }
  // A sleep until the word changes from val (or ts passes), and its wake-up: a futex on
  // Linux (shared between processes); elsewhere a short nap, the reader polling after it.
  static void wait(std::atomic<uint32_t>* addr, uint32_t val, const timespec& ts) {
#if defined(__linux__)
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), FUTEX_WAIT, val, &ts, nullptr, 0);
#else
    (void)addr, (void)val, (void)ts;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
#endif
  }
  static void wake(std::atomic<uint32_t>* addr) {
#if defined(__linux__)
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), FUTEX_WAKE, INT_MAX, nullptr, nullptr,
            0);
#else
    (void)addr;
#endif
  }
  void check_open() const {
    if (base_ == nullptr) throw std::runtime_error("the shared-memory link is closed");
  }
  unsigned char* slot(int i) const { return base_ + kHeader + static_cast<size_t>(i) * kSlotStride; }
  static std::atomic<uint32_t>& seq(unsigned char* slot) {
    static_assert(sizeof(std::atomic<uint32_t>) == 4 && std::atomic<uint32_t>::is_always_lock_free);
    return *reinterpret_cast<std::atomic<uint32_t>*>(slot);
  }
  static std::atomic<uint32_t>& waiters(unsigned char* slot) {
    return *reinterpret_cast<std::atomic<uint32_t>*>(slot + 4);
  }

  std::string name_;
  bool create_;
  unsigned char* base_ = nullptr;
  unsigned char* out_ = nullptr;
  unsigned char* in_ = nullptr;
  uint32_t last_in_ = 0;
};

// A UDP socket bound to an IPv4 address (port 0: a free one), non-blocking.
class UdpLink final : public SilLink {
 public:
  UdpLink(const std::string& host, int port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (port < 0 || port > 65535 || inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1)
      throw std::invalid_argument("'" + host + ":" + std::to_string(port) +
                                  "' is not an IPv4 address and port");
#if defined(SOCK_NONBLOCK) && defined(SOCK_CLOEXEC)
    fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
#else
    fd_ = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd_ >= 0 && (fcntl(fd_, F_SETFL, O_NONBLOCK) != 0 || fcntl(fd_, F_SETFD, FD_CLOEXEC) != 0)) {
      close(fd_);
      fd_ = -1;
    }
#endif
    if (fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      const int err = errno;
      close(fd_);
      fd_ = -1;
      throw std::runtime_error("cannot bind UDP " + host + ":" + std::to_string(port) + ": " +
                               std::strerror(err));
    }
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    bound_ = pack(addr);
  }
  ~UdpLink() override { close_link(); }
  UdpLink(const UdpLink&) = delete;
  UdpLink& operator=(const UdpLink&) = delete;

  void close_link() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  bool closed() const { return fd_ < 0; }
  uint64_t bound() const { return bound_; }

  static uint64_t pack(const sockaddr_in& a) {
    return (static_cast<uint64_t>(ntohl(a.sin_addr.s_addr)) << 16) | ntohs(a.sin_port);
  }
  static sockaddr_in unpack(uint64_t v) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(static_cast<uint32_t>(v >> 16));
    a.sin_port = htons(static_cast<uint16_t>(v & 0xffff));
    return a;
  }

  void send_to(const unsigned char* data, size_t n, uint64_t to) override {
    if (fd_ < 0) throw std::runtime_error("the UDP link is closed");
    const sockaddr_in a = unpack(to);
    // A controller's port gone (an error): the watchdog ends the run.
    (void)sendto(fd_, data, n, 0, reinterpret_cast<const sockaddr*>(&a), sizeof a);
  }

  long recv_from(unsigned char* buf, size_t cap, double timeout_s, double spin_s,
                 uint64_t& from, const std::function<bool()>& stop) override {
    if (fd_ < 0) throw std::runtime_error("the UDP link is closed");
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(bounded(timeout_s)));
    const auto spin_end = start + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(bounded(spin_s)));
    for (;;) {
      sockaddr_in a{};
      socklen_t len = sizeof a;
      const ssize_t got = recvfrom(fd_, buf, cap, MSG_DONTWAIT | MSG_TRUNC,
                                   reinterpret_cast<sockaddr*>(&a), &len);
      if (got >= 0) {
        from = pack(a);
        return static_cast<size_t>(got) > cap ? static_cast<long>(cap) + 1 : static_cast<long>(got);
      }
      // EAGAIN: nothing yet; ECONNREFUSED: the ICMP of a controller gone (read past it)
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNREFUSED && errno != EINTR)
        return -1;
      const auto now = Clock::now();
      if (now >= deadline) return -1;
      if (now < spin_end) {
        sched_yield();  // a controller on this core runs now, not after our time slice
        continue;
      }
      const double left = std::chrono::duration<double>(deadline - now).count();
      pollfd p{fd_, POLLIN, 0};
      poll(&p, 1, static_cast<int>(std::ceil(1e3 * (left < 0.05 ? left : 0.05))));
      if (stop && stop()) return -2;
    }
  }

 private:
  static double bounded(double s) { return s > 0 ? (s < 1e6 ? s : 1e6) : 0.0; }
  int fd_ = -1;
  uint64_t bound_ = 0;
};

}  // namespace vdsim
