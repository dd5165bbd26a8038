// A loaded model's shared region (runtime/native/region.h) as Python's Region: its channels'
// puts and takes in Messages or plain tensors, the firing pool's readiness scan and the
// workers' status (a worker's funcs fire in the set loop of set_steps.h).
// Declared for the driver's port (driver_port.cc), which puts and takes through it;
// region_bindings.cc holds the bodies and binds it.
#ifndef DFIR_RUNTIME_BINDINGS_PY_REGION_H_
#define DFIR_RUNTIME_BINDINGS_PY_REGION_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "channel_io.h"
#include "py_codec.h"
#include "py_ledger.h"
#include "region.h"

namespace dfir::bindings {

// The units of a worker's firing pool (runtime/worker/executor.py): per unit, its input channels and the
// channels its outputs go to (its sinks), which must have room before it fires.
struct FiringGroups {
  std::vector<std::vector<uint32_t>> inputs;
  std::vector<std::vector<uint32_t>> sinks;
};

class PyRegion {
 public:
  PyRegion(uint32_t bells, const std::vector<std::tuple<std::string, uint32_t, uint32_t>>& channels, uint32_t workers,
           uint64_t arena_bytes, const std::string& name);
  ~PyRegion();

  rt::Region& region() const { return *region_; }
  const std::shared_ptr<rt::Region>& shared() const { return region_; }

  // Puts each message on its channel, all or nothing (rt::PendingPut), each distinct message
  // encoded once.
  int Put(const std::vector<std::pair<uint32_t, pybind11::object>>& targets, int64_t timeout_ms, bool ring);

  // Puts one transaction of tensors without Message objects: `arrays[k]` (a numpy array, or None:
  // not fed) goes to every channel of `routes[k]` (shared channels) as Put would put
  // Message.tensor(meta, arrays[k]); `fields` is (transaction_id, start_time, end_time, flow_flags,
  // user_data). Each array is encoded once. All or nothing, statuses as Put. With a `ledger`, the
  // transaction is opened in it once it is put (not when nothing is).
  int PutArrays(const pybind11::sequence& routes, const pybind11::sequence& arrays, const pybind11::tuple& fields,
                int64_t timeout_ms, PyLedger* ledger);

  // PutArrays over native routes: `arrays[k]` (borrowed; None: not fed) to `routes[k]`.
  int PutArrayList(const std::vector<std::vector<uint32_t>>& routes, PyObject* const* arrays,
                   const rt::TransactionInfo& info, const rt::Deadline& deadline, PyLedger* ledger);

  // One set from `channels` as (fields, arrays) when every message is a plain tensor (no return
  // code, array body) of one transaction: `fields` its (transaction_id, start_time, end_time,
  // flow_flags, user_data), `arrays` one numpy array per channel; otherwise the set's Messages (a
  // list). [] on timeout; None once the region closes. Waits as Take. With a `ledger`, the
  // transaction of the first channel's message is settled in it (shared channels only).
  pybind11::object TakeTensors(const std::vector<uint32_t>& channels, uint32_t bell, int64_t timeout_ms,
                               PyLedger* ledger);

  // TakeTensors' wait and take: `arrays` (one item per channel) filled and returned for a set of
  // plain tensors, `seen(i, record)` called with each channel's record before its array is made;
  // else as TakeTensors.
  template <typename Seen>
  pybind11::object TakeTensorSet(const std::vector<uint32_t>& channels, uint32_t bell, const rt::Deadline& deadline,
                                 PyLedger* ledger, Seen&& seen, pybind11::list& arrays) {
    namespace py = pybind11;
    CheckConfigured();
    if (channels.empty()) throw rt::RuntimeError("take_tensors needs at least one channel");
    GilRelease gil;
    rt::SetsReady ready = rt::AwaitSets(*region_, channels, bell, 1, deadline, gil);
    // Results of transactions that recovery failed are dropped before the set is looked at.
    while (ready.sets != 0 && ledger != nullptr && rt::DropStaleHeads(*region_, channels, ledger->native()) != 0) {
      ready = rt::AwaitSets(*region_, channels, bell, 1, deadline, gil);
    }
    if (ready.status == rt::WaitStatus::kClosed) return py::none();
    if (ready.sets == 0) return py::list();
    if (ledger != nullptr) rt::SettleNextSet(*region_, channels, ledger->native());
    Decoder decoder(region_);
    if (rt::NextSetIsPlainTensors(*region_, channels, Types().tensor_kind)) {
      rt::TakeSets(*region_, channels, 1, [&](size_t i, const rt::Taken& message) {
        seen(i, *message.record);
        arrays[i] = decoder.DecodeArray(*message.record);
      });
      return arrays;
    }
    py::list set(channels.size());
    rt::TakeSets(*region_, channels, 1, [&](size_t i, const rt::Taken& message) { set[i] = decoder.Take(message); });
    return set;
  }

  // Up to `max_sets` tuples holding one message from each channel, once all of them hold one;
  // [] on timeout; None once the region closes.
  pybind11::object Take(const std::vector<uint32_t>& channels, uint32_t bell, uint32_t max_sets, int64_t timeout_ms);

  // rt::DropStaleHeads on `channels` with `ledger`.
  uint64_t DropStale(const std::vector<uint32_t>& channels, PyLedger& ledger);

  int WaitForChange(const std::vector<uint32_t>& channels, uint32_t bell, int64_t stalled, int64_t timeout_ms);

  // ([(unit, sets)], blocked): each unit of `groups` that can fire now, as every input holds a
  // message and every sink has room, with how many input sets (at most `limit`) it can take
  // without filling a sink; `blocked` when some unit with its inputs ready has a full sink.
  std::pair<std::vector<std::pair<uint32_t, uint64_t>>, bool> Ready(const FiringGroups& groups, uint64_t limit) const;

  int WaitForClose(uint32_t bell, int64_t timeout_ms);

  pybind11::tuple WorkerStatus(uint32_t worker) const;

  pybind11::dict ArenaStats() const;

  // The region offset of an array's bytes and the arena block holding them (0: not in the arena).
  pybind11::tuple Locate(const pybind11::object& array) const;

 private:
  // The status of a put whose encoding found no arena room in time.
  int NoRoomStatus() const;

  std::shared_ptr<rt::Region> region_;
  uint64_t epoch_ = 0;
};

}  // namespace dfir::bindings

#endif  // DFIR_RUNTIME_BINDINGS_PY_REGION_H_
