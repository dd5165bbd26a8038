// Bindings of instance dispatch and input alignment (runtime/native/dispatch.h, aligner.h).
//
// `InstanceDispatcher(instances, rule)` picks the instance of a replicated node for a message;
// `Aligner(inputs, max_groups, timeout_ms, dropout)` groups a multi-input func's messages by
// (transaction_id, data_label). The native aligner holds handles; this binding keeps the Python
// message of each handle until its group leaves the aligner.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "aligner.h"
#include "dispatch.h"
#include "shm.h"

namespace py = pybind11;

namespace {

using dfir::rt::AlignedGroup;
using dfir::rt::Aligner;
using dfir::rt::DispatchRule;
using dfir::rt::InstanceDispatcher;

DispatchRule ParseRule(const std::string& rule) {
  if (rule == "round_robin") return DispatchRule::kRoundRobin;
  if (rule == "route_label") return DispatchRule::kRouteLabel;
  throw dfir::rt::RuntimeError("dispatch rule '" + rule + "' is unknown; expected 'round_robin' or 'route_label'");
}

std::string RuleName(const InstanceDispatcher& dispatcher) {
  return dispatcher.rule() == DispatchRule::kRouteLabel ? "route_label" : "round_robin";
}

// An Aligner whose handles stand for Python objects held here.
class PyAligner {
 public:
  PyAligner(uint32_t inputs, uint32_t max_groups, int64_t timeout_ms, bool dropout)
      : aligner_(inputs, max_groups, timeout_ms, dropout) {}

  // (completed messages in input order | None, (transaction_id, data_label, messages) | None)
  py::tuple Push(uint32_t input, uint64_t transaction_id, uint32_t data_label, py::object message,
                 int64_t now_ms) {
    const uint64_t handle = next_handle_++;
    dfir::rt::PushResult result = aligner_.Push(input, transaction_id, data_label, handle, now_ms);
    held_.emplace(handle, std::move(message));
    py::object completed = py::none();
    py::object evicted = py::none();
    if (result.evicted) evicted = Release(*result.evicted);
    if (result.completed) completed = Release(*result.completed)[2];
    return py::make_tuple(std::move(completed), std::move(evicted));
  }

  py::list Expire(int64_t now_ms) { return ReleaseAll(aligner_.Expire(now_ms)); }
  py::list Clear() { return ReleaseAll(aligner_.Clear()); }
  py::list Discard(uint64_t transaction_id) { return ReleaseAll(aligner_.Discard(transaction_id)); }
  std::optional<int64_t> NextDeadline() const { return aligner_.NextDeadline(); }
  const Aligner& native() const { return aligner_; }

 private:
  // (transaction_id, data_label, messages with None for the missing ones), released from held_.
  py::tuple Release(const AlignedGroup& group) {
    py::tuple messages(group.handles.size());
    for (size_t j = 0; j < group.handles.size(); ++j) {
      auto found = held_.find(group.handles[j]);
      if (found == held_.end()) {
        messages[j] = py::none();
        continue;
      }
      messages[j] = std::move(found->second);
      held_.erase(found);
    }
    return py::make_tuple(group.key.transaction_id, group.key.data_label, std::move(messages));
  }

  py::list ReleaseAll(const std::vector<AlignedGroup>& groups) {
    py::list released;
    for (const AlignedGroup& group : groups) released.append(Release(group));
    return released;
  }

  Aligner aligner_;
  std::unordered_map<uint64_t, py::object> held_;
  uint64_t next_handle_ = 1;
};

}  // namespace

void SetupAlignBindings(py::module_& m) {
  py::class_<InstanceDispatcher>(m, "InstanceDispatcher",
                                 "Picks the instance of a replicated node for a message by its dispatch rule.")
      .def(py::init([](uint32_t instances, const std::string& rule) {
             return InstanceDispatcher(instances, ParseRule(rule));
           }),
           py::arg("instances"), py::arg("rule") = "round_robin")
      .def_property_readonly("instances", &InstanceDispatcher::instances)
      .def_property_readonly("rule", &RuleName)
      .def("route", &InstanceDispatcher::Route, py::arg("transaction_id"), py::arg("route_label") = 0);
  py::class_<PyAligner>(m, "Aligner", "Groups a multi-input func's messages by (transaction id, data label).")
      .def(py::init<uint32_t, uint32_t, int64_t, bool>(), py::arg("inputs"), py::arg("max_groups"),
           py::arg("timeout_ms"), py::arg("dropout"))
      .def("push", &PyAligner::Push, py::arg("input"), py::arg("transaction_id"), py::arg("data_label"),
           py::arg("message"), py::arg("now_ms"))
      .def("expire", &PyAligner::Expire, py::arg("now_ms"))
      .def("clear", &PyAligner::Clear)
      .def("discard", &PyAligner::Discard, py::arg("transaction_id"),
           "Removes the groups of a transaction: [(transaction_id, data_label, messages)].")
      .def("next_deadline", &PyAligner::NextDeadline)
      .def_property_readonly("inputs", [](const PyAligner& self) { return self.native().inputs(); })
      .def_property_readonly("max_groups", [](const PyAligner& self) { return self.native().max_groups(); })
      .def_property_readonly("timeout_ms", [](const PyAligner& self) { return self.native().timeout_ms(); })
      .def_property_readonly("dropout", [](const PyAligner& self) { return self.native().dropout(); })
      .def_property_readonly("held", [](const PyAligner& self) { return self.native().held(); });
}
