// The SIL transports and exchange (vdsim/sil_link.hpp, vdsim/sil_exchange.hpp) for
// vdsim_gym.sil. Waits run with the GIL released; between waits of at most 50 ms they
// check Python's signals (on the main thread) and the caller's `stopping()`, so Ctrl-C
// and a run's stop reach them.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <utility>
#include <vector>

#include "vdsim/dyno_session.hpp"
#include "vdsim/realtime_runner.hpp"
#include "vdsim/session.hpp"
#include "vdsim/sil_exchange.hpp"

namespace py = pybind11;
using vdsim::ShmLink;
using vdsim::SilExchange;
using vdsim::SilLink;
using vdsim::UdpLink;

namespace {

// A stop check for a wait with the GIL released: Python's signals (a raising handler
// leaves its exception set: `raised`), then `stopping()` if given.
struct PyStop {
  py::object stopping;
  bool raised = false;
  std::function<bool()> fn() {
    return [this] {
      py::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() != 0) {
        raised = true;
        return true;
      }
      if (!stopping.is_none()) {
        try {
          return stopping().cast<bool>();
        } catch (py::error_already_set&) {
          raised = true;  // its exception is restored for the caller when the wait ends
          throw;
        }
      }
      return false;
    };
  }
};

using FArray = py::array_t<float, py::array::c_style>;
using DArray = py::array_t<double, py::array::c_style>;

std::pair<std::string, int> address_of(uint64_t v) {
  const sockaddr_in a = UdpLink::unpack(v);
  char host[INET_ADDRSTRLEN] = "";
  inet_ntop(AF_INET, &a.sin_addr, host, sizeof host);
  return {host, ntohs(a.sin_port)};
}

template <class Runner>
void bind_sample(py::module_& m) {
  m.def("sil_sample",
        [](Runner& runner, vdsim::EnvCoreBase& core, SilExchange& ex, uint32_t k, double slot,
           double dt, double timeout, int terminal_mask, FArray obs, DArray info, DArray action,
           py::object stopping) {
          const auto& spec = core.spec();
          if (static_cast<size_t>(obs.size()) != spec.obs_size() ||
              static_cast<size_t>(info.size()) != spec.info_size() ||
              static_cast<size_t>(action.size()) != ex.failsafe().size())
            throw std::invalid_argument("sil_sample: obs, info or action of the wrong size");
          PyStop stop{std::move(stopping)};
          vdsim::SilSample s;
          {
            py::gil_scoped_release release;
            s = vdsim::sil_sample(runner, core, ex, k, slot, dt, timeout, terminal_mask,
                                  obs.mutable_data(), info.mutable_data(),
                                  action.mutable_data(), stop.fn());
          }
          if (stop.raised && PyErr_Occurred()) throw py::error_already_set();
          return py::make_tuple(s.answer, s.flags, s.sample_tick, s.latch_tick, s.wake,
                                s.wall, s.latched);
        },
        py::arg("runner"), py::arg("core"), py::arg("exchange"), py::arg("k"),
        py::arg("slot"), py::arg("dt"),
        py::arg("timeout"), py::arg("terminal_mask"), py::arg("obs").noconvert(),
        py::arg("info").noconvert(), py::arg("action").noconvert(),
        py::arg("stopping") = py::none(),
        "One wall-clock SIL sample: a sleep until slot [s of the runner's clock], the "
        "core's observation then sent, its command awaited and latched under the runner's "
        "mutex; (answer, flags, sample_tick, latch_tick, wake, wall, latched). answer -1: "
        "the episode had ended at the snapshot (nothing sent); -2: the runner had "
        "finished (nothing read)");
}

}  // namespace

void bind_sil(py::module_& m) {
  py::class_<SilLink>(m, "SilLink", "A SIL transport (UdpLink or ShmLink)");
  py::class_<ShmLink, SilLink>(m, "ShmLink",
                               "One side of a SIL shared-memory region (docs/SIL.md): "
                               "create=True makes it (the simulator), False opens it (a "
                               "controller)")
      .def(py::init<const std::string&, bool>(), py::arg("name"), py::arg("create"))
      .def("send", [](ShmLink& link, py::bytes data) {
             std::string_view v = data;
             if (v.size() > ShmLink::kCapacity)
               throw py::value_error("a message of " + std::to_string(v.size()) +
                                     " bytes does not fit a slot of " +
                                     std::to_string(ShmLink::kCapacity));
             py::gil_scoped_release release;
             link.send_to(reinterpret_cast<const unsigned char*>(v.data()), v.size(), 0);
           }, py::arg("data"), "Writes a message to this side's outgoing slot")
      .def("recv", [](ShmLink& link, double timeout, double spin)
               -> std::optional<std::pair<py::bytes, uint64_t>> {
             std::vector<unsigned char> buf(ShmLink::kCapacity + 1);
             uint64_t writer = 0;
             PyStop stop{py::none()};
             long n;
             {
               py::gil_scoped_release release;
               n = link.recv_from(buf.data(), buf.size(), timeout, spin, writer, stop.fn());
             }
             if (stop.raised && PyErr_Occurred()) throw py::error_already_set();
             if (n < 0) return std::nullopt;
             return std::make_pair(py::bytes(reinterpret_cast<const char*>(buf.data()),
                                             static_cast<size_t>(n)), writer);
           }, py::arg("timeout"), py::arg("spin") = 200e-6,
           "The next message and its writer's pid, or None after timeout seconds (polls "
           "for spin seconds first, then sleeps until written)")
      .def("close", &ShmLink::close_link,
           "Unmaps the region (the creator also removes its name); idempotent")
      .def_property_readonly("closed", &ShmLink::closed)
      .def_property_readonly("name", &ShmLink::name)
      .def_readonly_static("CAPACITY", &ShmLink::kCapacity)
      .def_readonly_static("SIZE", &ShmLink::kSize);
  py::class_<UdpLink, SilLink>(m, "UdpLink", "A UDP socket bound to an IPv4 address")
      .def(py::init<const std::string&, int>(), py::arg("host"), py::arg("port"))
      .def_property_readonly("address", [](const UdpLink& l) { return address_of(l.bound()); },
                             "(host, port) bound")
      .def("close", &UdpLink::close_link)
      .def_property_readonly("closed", &UdpLink::closed);

  py::class_<vdsim::SilCounters>(m, "SilCounters")
      .def_readonly("n_samples", &vdsim::SilCounters::n_samples)
      .def_readonly("n_commands", &vdsim::SilCounters::n_commands)
      .def_readonly("n_late", &vdsim::SilCounters::n_late)
      .def_readonly("n_stale", &vdsim::SilCounters::n_stale)
      .def_readonly("n_duplicate", &vdsim::SilCounters::n_duplicate)
      .def_readonly("n_malformed", &vdsim::SilCounters::n_malformed)
      .def_readonly("n_foreign", &vdsim::SilCounters::n_foreign)
      .def_readonly("n_failsafe", &vdsim::SilCounters::n_failsafe);
  py::class_<SilExchange> exchange(m, "SilExchange",
                                   "The simulator's side of a SIL run over a link: the "
                                   "controller that said hello, each sample's command "
                                   "awaited, every other message counted by kind");
  exchange
      .def(py::init<SilLink&, std::vector<double>, double>(), py::arg("link"),
           py::arg("failsafe"), py::arg("spin"), py::keep_alive<1, 2>())
      .def("wait_hello", [](SilExchange& ex, double timeout, py::object stopping) {
             PyStop stop{std::move(stopping)};
             bool ok;
             {
               py::gil_scoped_release release;
               ok = ex.wait_hello(timeout, stop.fn());
             }
             if (stop.raised && PyErr_Occurred()) throw py::error_already_set();
             return ok;
           }, py::arg("timeout"), py::arg("stopping") = py::none(),
           "Waits for a controller's hello; False at the timeout")
      .def("ask", [](SilExchange& ex, uint32_t k, int64_t tick, double t, FArray obs,
                     double timeout, DArray action, py::object stopping) {
             if (static_cast<size_t>(action.size()) != ex.failsafe().size())
               throw std::invalid_argument("ask: action of the wrong size");
             PyStop stop{std::move(stopping)};
             int answer;
             double wall = 0.0;
             {
               py::gil_scoped_release release;
               answer = ex.ask(k, tick, t, obs.data(), static_cast<size_t>(obs.size()),
                               timeout, action.mutable_data(), wall, stop.fn());
             }
             if (stop.raised && PyErr_Occurred()) throw py::error_already_set();
             return py::make_tuple(answer, wall);
           }, py::arg("k"), py::arg("tick"), py::arg("t"), py::arg("obs").noconvert(),
           py::arg("timeout"), py::arg("action").noconvert(), py::arg("stopping") = py::none(),
           "Sample k's observation sent, its command awaited into action: (answer, wall); "
           "answer 0: a command, 1: the fail-safe action (no answer in time), 2: stopped")
      .def("end", &SilExchange::end, py::arg("reason"), "Sends the end message")
      .def("drain", &SilExchange::drain, "Counts what waits after the run, without waiting")
      .def_property_readonly("counters", &SilExchange::counters)
      .def_property_readonly("misses", &SilExchange::misses,
                             "Fail-safe samples in a row")
      .def_property_readonly("has_client", &SilExchange::has_client);
  exchange.attr("COMMAND") = static_cast<int>(SilExchange::kCommand);
  exchange.attr("FAILSAFE") = static_cast<int>(SilExchange::kFailsafe);
  exchange.attr("STOPPED") = static_cast<int>(SilExchange::kStopped);
  bind_sample<vdsim::RealTimeRunner<vdsim::Session>>(m);
  bind_sample<vdsim::RealTimeRunner<vdsim::DynoSession>>(m);
}
