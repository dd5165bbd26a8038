// Bindings of the shared region (runtime/native/region.h, channel_io.h) as Region, and of the
// firing pool's FiringGroups: the bodies of PyRegion (py_region.h) — its puts and takes in
// Messages or plain tensors, the firing pool's readiness scan, the workers' status — and their
// binding (the set loop that fires a worker's funcs is set_steps.h). Use them through
// dfir.runtime.channels, not directly.
#include "py_region.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "arena_bindings.h"
#include "channel_io.h"
#include "message_codec.h"
#include "numpy_api.h"
#include "py_codec.h"
#include "py_ledger.h"
#include "region.h"
#include "runtime_bindings.h"
#include "shm.h"
#include "slots.h"

namespace py = pybind11;

namespace dfir::bindings {

PyRegion::PyRegion(uint32_t bells, const std::vector<std::tuple<std::string, uint32_t, uint32_t>>& channels,
                   uint32_t workers, uint64_t arena_bytes, const std::string& name) {
  rt::RegionLayout layout;
  layout.bells = bells;
  layout.workers = workers;
  layout.arena_bytes = arena_bytes;
  for (const auto& [kind, capacity, bell] : channels) {
    if (kind != "shared" && kind != "local") {
      throw rt::RuntimeError("channel kind '" + kind + "' is not 'shared' or 'local'");
    }
    layout.channels.push_back(
        rt::ChannelSpec{kind == "shared" ? rt::ChannelKind::kShared : rt::ChannelKind::kLocal, capacity, bell});
  }
  region_ = rt::Region::Create(layout, name);
  epoch_ = rt::ForkEpoch();
}

PyRegion::~PyRegion() {
  if (epoch_ == rt::ForkEpoch()) rt::DrainLocalChannels(*region_, References());
}

int PyRegion::Put(const std::vector<std::pair<uint32_t, py::object>>& targets, int64_t timeout_ms, bool ring) {
  CheckConfigured();
  if (region_->closing()) return StatusCode(rt::WaitStatus::kClosed);
  rt::Deadline deadline = rt::Deadline::AfterMs(timeout_ms);
  GilRelease gil;
  Encoder encoder(region_, deadline, gil);
  rt::PendingPut put(*region_);
  for (const auto& [channel, message] : targets) {
    if (!rt::IsShared(*region_, channel)) {
      put.AddLocal(channel, message.ptr());
    } else if (!put.AddAgain(channel, message.ptr())) {
      rt::MessageRecord record;
      if (!encoder.Encode(message, record)) return NoRoomStatus();
      put.Add(channel, record, message.ptr());
    }
  }
  return StatusCode(put.Push(deadline, gil, References(), ring));
}

int PyRegion::PutArrays(const py::sequence& routes, const py::sequence& arrays, const py::tuple& fields,
                        int64_t timeout_ms, PyLedger* ledger) {
  CheckConfigured();
  if (routes.size() != arrays.size()) {
    throw rt::RuntimeError("put_arrays needs one route per array: " + std::to_string(routes.size()) +
                           " routes, " + std::to_string(arrays.size()) + " arrays");
  }
  std::vector<std::vector<uint32_t>> channels;
  std::vector<py::object> held;  // the arrays, alive while their addresses key the put
  channels.reserve(routes.size());
  held.reserve(arrays.size());
  for (size_t k = 0; k < arrays.size(); ++k) {
    held.push_back(py::object(arrays[k]));
    channels.push_back(held.back().is_none() ? std::vector<uint32_t>{} : routes[k].cast<std::vector<uint32_t>>());
  }
  std::vector<PyObject*> pointers;
  for (const py::object& array : held) pointers.push_back(array.ptr());
  return PutArrayList(channels, pointers.data(), TransactionOfFields(fields), rt::Deadline::AfterMs(timeout_ms),
                      ledger);
}

int PyRegion::PutArrayList(const std::vector<std::vector<uint32_t>>& routes, PyObject* const* arrays,
                           const rt::TransactionInfo& info, const rt::Deadline& deadline, PyLedger* ledger) {
  if (region_->closing()) return StatusCode(rt::WaitStatus::kClosed);
  rt::MessageRecord header;
  rt::WriteHeader(info, Types().tensor_kind, 0, 0, 0, header);
  GilRelease gil;
  Encoder encoder(region_, deadline, gil);
  rt::PendingPut put(*region_);
  for (size_t k = 0; k < routes.size(); ++k) {
    py::handle array(arrays[k]);
    if (array.is_none()) continue;
    for (uint32_t channel : routes[k]) {
      if (!rt::IsShared(*region_, channel)) {
        throw rt::RuntimeError("put_arrays needs shared channels; " + std::to_string(channel) + " is local");
      }
      if (put.AddAgain(channel, array.ptr())) continue;  // one more reference to the body, no copy
      rt::MessageRecord record;
      if (!encoder.EncodeArray(header, py::reinterpret_borrow<py::object>(array), record)) return NoRoomStatus();
      put.Add(channel, record, array.ptr());
    }
  }
  if (ledger != nullptr) put.OpenOnPush(ledger->native(), info);
  return StatusCode(put.Push(deadline, gil, References()));
}

py::object PyRegion::TakeTensors(const std::vector<uint32_t>& channels, uint32_t bell, int64_t timeout_ms,
                                 PyLedger* ledger) {
  py::object fields;
  py::list arrays(channels.size());
  py::object set = TakeTensorSet(channels, bell, rt::Deadline::AfterMs(timeout_ms), ledger,
                                 [&](size_t i, const rt::MessageRecord& record) {
                                   if (i == 0) fields = FieldsOf(record);
                                 }, arrays);
  return set.is(arrays) ? py::make_tuple(std::move(fields), std::move(arrays)) : set;
}

py::object PyRegion::Take(const std::vector<uint32_t>& channels, uint32_t bell, uint32_t max_sets, int64_t timeout_ms) {
  CheckConfigured();
  if (channels.empty() || max_sets == 0) throw rt::RuntimeError("take needs at least one channel and one set");
  GilRelease gil;
  rt::SetsReady ready = rt::AwaitSets(*region_, channels, bell, max_sets, rt::Deadline::AfterMs(timeout_ms), gil);
  if (ready.status == rt::WaitStatus::kClosed) return py::none();
  py::list sets;
  Decoder decoder(region_);
  py::tuple set;
  rt::TakeSets(*region_, channels, ready.sets, [&](size_t i, const rt::Taken& message) {
    if (i == 0) set = py::tuple(channels.size());
    set[i] = decoder.Take(message);
    if (i + 1 == channels.size()) sets.append(std::move(set));
  });
  return sets;
}

int PyRegion::WaitForChange(const std::vector<uint32_t>& channels, uint32_t bell, int64_t stalled, int64_t timeout_ms) {
  py::gil_scoped_release unlocked;
  return StatusCode(region_->WaitForChange(channels, bell, stalled, rt::Deadline::AfterMs(timeout_ms)));
}

std::pair<std::vector<std::pair<uint32_t, uint64_t>>, bool> PyRegion::Ready(const FiringGroups& groups,
                                                                            uint64_t limit) const {
  std::vector<std::pair<uint32_t, uint64_t>> ready;
  bool blocked = false;
  for (size_t unit = 0; unit < groups.inputs.size(); ++unit) {
    uint64_t sets = limit;
    for (uint32_t channel : groups.inputs[unit]) sets = std::min(sets, region_->ring(channel).Ready(sets));
    if (sets == 0) continue;
    for (uint32_t channel : groups.sinks[unit]) {
      rt::Ring sink = region_->ring(channel);
      if (sink.overwrites()) continue;  // a full OVERWRITE sink drops its oldest, never blocks
      uint64_t size = sink.size();
      sets = std::min<uint64_t>(sets, size < sink.capacity() ? sink.capacity() - size : 0);
    }
    if (sets > 0) {
      ready.emplace_back(static_cast<uint32_t>(unit), sets);
    } else {
      blocked = true;
    }
  }
  return {std::move(ready), blocked};
}

int PyRegion::WaitForClose(uint32_t bell, int64_t timeout_ms) {
  py::gil_scoped_release unlocked;
  return StatusCode(region_->WaitForClose(bell, rt::Deadline::AfterMs(timeout_ms)));
}

uint64_t PyRegion::DropStale(const std::vector<uint32_t>& channels, PyLedger& ledger) {
  CheckConfigured();
  return rt::DropStaleHeads(*region_, channels, ledger.native());
}

py::tuple PyRegion::WorkerStatus(uint32_t worker) const {
  rt::WorkerSlot& slot = region_->worker(worker);
  return py::make_tuple(slot.pid.load(), slot.running_node.load(), py::str(region_->LastWords(worker)));
}

py::dict PyRegion::ArenaStats() const {
  rt::ArenaStats stats = region_->arena().Stats();
  py::dict out;
  out["capacity"] = stats.capacity;
  out["used"] = stats.used;
  out["live_blocks"] = stats.live_blocks;
  out["live_bytes"] = stats.live_bytes;
  out["cached_bytes"] = stats.cached_bytes;
  return out;
}

py::tuple PyRegion::Locate(const py::object& array) const {
  if (!PyArray_Check(array.ptr())) throw rt::RuntimeError("locate needs a numpy array");
  auto* raw = reinterpret_cast<PyArrayObject*>(array.ptr());
  uint64_t block = ArenaBlockOf(*region_, raw);
  uint64_t offset = block == 0 ? 0 : static_cast<uint64_t>(static_cast<uint8_t*>(PyArray_DATA(raw)) - region_->base());
  return py::make_tuple(block, offset);
}

int PyRegion::NoRoomStatus() const {
  return StatusCode(region_->closing() ? rt::WaitStatus::kClosed : rt::WaitStatus::kTimeout);
}

void BindRegion(py::module_& m) {
  py::class_<FiringGroups>(m, "FiringGroups", "The inputs and sinks of a firing pool's units (Region.ready).")
      .def(py::init([](std::vector<std::vector<uint32_t>> inputs, std::vector<std::vector<uint32_t>> sinks) {
             if (inputs.size() != sinks.size()) {
               throw rt::RuntimeError("a firing pool needs the sinks of each of its " +
                                      std::to_string(inputs.size()) + " units, got " + std::to_string(sinks.size()));
             }
             return FiringGroups{std::move(inputs), std::move(sinks)};
           }),
           py::arg("inputs"), py::arg("sinks"));
  py::class_<PyRegion>(m, "Region", "The shared region of one loaded model (see runtime/native/region.h).")
      .def(py::init<uint32_t, const std::vector<std::tuple<std::string, uint32_t, uint32_t>>&, uint32_t, uint64_t,
                    const std::string&>(),
           py::arg("bells"), py::arg("channels"), py::arg("workers"), py::arg("arena_bytes"), py::arg("name"))
      .def("put", &PyRegion::Put, py::arg("targets"), py::arg("timeout_ms"), py::arg("ring") = true,
           "Without `ring`, the consumers' doorbells ring only before a wait for room: ring them later.")
      .def(
          "ring",
          [](const PyRegion& self, const std::vector<uint32_t>& channels) { rt::RingConsumers(self.region(), channels); },
          py::arg("channels"), "Rings the doorbell of each channel's consumer (once per doorbell).")
      .def("put_arrays", &PyRegion::PutArrays, py::arg("routes"), py::arg("arrays"), py::arg("fields"),
           py::arg("timeout_ms"), py::arg("ledger") = nullptr)
      .def("take", &PyRegion::Take, py::arg("channels"), py::arg("bell"), py::arg("max_sets"), py::arg("timeout_ms"))
      .def("take_tensors", &PyRegion::TakeTensors, py::arg("channels"), py::arg("bell"), py::arg("timeout_ms"),
           py::arg("ledger") = nullptr)
      .def("wait_for_change", &PyRegion::WaitForChange, py::arg("channels"), py::arg("bell"), py::arg("stalled"),
           py::arg("timeout_ms"))
      .def("wait_for_close", &PyRegion::WaitForClose, py::arg("bell"), py::arg("timeout_ms"))
      .def("ready", &PyRegion::Ready, py::arg("groups"), py::arg("limit"))
      .def(
          "set_consumer_bell",
          [](PyRegion& self, const std::vector<uint32_t>& channels, uint32_t bell) {
            self.region().SetConsumerBell(channels, bell);
          },
          py::arg("channels"), py::arg("bell"))
      .def(
          "waiting_transactions",
          [](const PyRegion& self, uint32_t channel) { return rt::WaitingTransactions(self.region(), channel); },
          py::arg("channel"))
      .def("size", [](const PyRegion& self, uint32_t channel) { return self.region().ring(channel).size(); })
      .def("pops", [](const PyRegion& self, uint32_t channel) { return self.region().ring(channel).pops(); })
      .def("capacity", [](const PyRegion& self, uint32_t channel) { return self.region().ring(channel).capacity(); })
      .def(
          "set_overwrite",
          [](PyRegion& self, uint32_t channel) { self.region().ring(channel).SetOverwrite(true); },
          py::arg("channel"),
          "Makes `channel` OVERWRITE: a push that finds it full drops its oldest message. Before any put.")
      .def("overwrites", [](const PyRegion& self, uint32_t channel) { return self.region().ring(channel).overwrites(); })
      .def("dropped", [](const PyRegion& self, uint32_t channel) { return self.region().ring(channel).dropped(); })
      .def("is_shared", [](const PyRegion& self, uint32_t channel) { return rt::IsShared(self.region(), channel); })
      .def_property_readonly("closing", [](const PyRegion& self) { return self.region().closing(); })
      .def("close", [](PyRegion& self) { self.region().Close(); })
      .def("detach", [](PyRegion& self) { self.region().Detach(); })
      .def("set_pid", [](PyRegion& self, uint32_t worker, int32_t pid) { self.region().worker(worker).pid.store(pid); })
      .def(
          "running_node",
          [](PyRegion& self, uint32_t worker) {
            std::atomic<int32_t>& slot = self.region().worker(worker).running_node;
            static_assert(sizeof slot == sizeof(int32_t));
            return py::memoryview::from_buffer(reinterpret_cast<int32_t*>(&slot), {1}, {sizeof(int32_t)});
          },
          py::arg("worker"), "A writable one-int view of the node the worker runs now (-1: none).")
      .def(
          "set_last_words",
          [](PyRegion& self, uint32_t worker, const std::string& text) { self.region().SetLastWords(worker, text); },
          py::arg("worker"), py::arg("text"))
      .def("worker_status", &PyRegion::WorkerStatus, py::arg("worker"))
      .def(
          "timed_out_transaction",
          [](const PyRegion& self, uint32_t worker) -> py::object {
            uint64_t noted = self.region().worker(worker).timed_out_transaction.load();
            if (noted == 0) return py::none();
            return py::int_(noted - 1);
          },
          py::arg("worker"), "The transaction of a call of the worker that ran past its time limit, or None.")
      .def(
          "reset_worker",
          [](PyRegion& self, uint32_t worker) {
            rt::WorkerSlot& slot = self.region().worker(worker);
            slot.pid.store(0);
            slot.running_node.store(-1);
            slot.timed_out_transaction.store(0);
            self.region().SetLastWords(worker, "");
          },
          py::arg("worker"), "Clears the slot of a worker that died, before its replacement starts.")
      .def(
          "taken",
          [](const PyRegion& self, uint32_t channel) {
            return self.region().ring(channel).header().head.load(std::memory_order_acquire);
          },
          py::arg("channel"), "How many messages the channel's consumer has taken since it was made.")
      .def(
          "drain",
          [](PyRegion& self, uint32_t channel) {
            CheckConfigured();
            return rt::DrainShared(self.region(), channel);
          },
          py::arg("channel"), "Takes and gives back every message waiting in a shared channel; how many.")
      .def(
          "clear_local",
          [](PyRegion& self, uint32_t channel) {
            if (rt::IsShared(self.region(), channel)) {
              throw rt::RuntimeError("channel " + std::to_string(channel) + " is shared");
            }
            self.region().ring(channel).Clear();
          },
          py::arg("channel"),
          "Empties a local channel of a worker that died (it held pointers into that process), unread.")
      .def(
          "unpublished",
          [](const PyRegion& self, uint32_t channel) { return self.region().ring(channel).Unpublished(); },
          py::arg("channel"), "Positions of a shared channel claimed by a push and not published yet.")
      .def(
          "publish_void",
          [](PyRegion& self, uint32_t channel, const std::vector<uint64_t>& positions, uint64_t transaction_id,
             int32_t ret_code, uint8_t kind, const std::string& text) {
            if (!rt::IsShared(self.region(), channel)) {
              throw rt::RuntimeError("channel " + std::to_string(channel) + " is local");
            }
            rt::MessageRecord record{};
            record.transaction_id = transaction_id;
            record.ret_code = ret_code;
            record.kind = kind;
            record.encoding = rt::BodyEncoding::kText;
            record.inline_body = 1;
            record.body_size = std::min<size_t>(text.size(), rt::kInlineBytes);
            std::memcpy(record.inline_bytes, text.data(), record.body_size);
            return self.region().ring(channel).PublishAt(positions, &record, sizeof record);
          },
          py::arg("channel"), py::arg("positions"), py::arg("transaction_id"), py::arg("ret_code"), py::arg("kind"),
          py::arg("text"),
          "Publishes an error message (no body block) at positions a dead producer claimed; how many.")
      .def(
          "free_unreleased",
          [](PyRegion& self, uint32_t channel) { return self.region().ring(channel).FreeUnreleased(); },
          py::arg("channel"), "Frees the slots a dead consumer claimed and never freed; how many.")
      .def("drop_stale", &PyRegion::DropStale, py::arg("channels"), py::arg("ledger"),
           "Drops the results of transactions recovery replaced from the heads of `channels`; how many.")
      .def("arena_stats", &PyRegion::ArenaStats)
      .def("locate", &PyRegion::Locate, py::arg("array"))
      .def(
          "use_arena_allocator",
          [](PyRegion& self, uint64_t threshold) { UseArenaAllocator(self.shared(), threshold); },
          py::arg("threshold"));
}

}  // namespace dfir::bindings
