// A plain C++ UDF func as the runtime calls it, shared by the binding files of the native module:
// `UdfCaller` (udf_bindings.cc) runs the func on native messages — made of the Messages a call
// layer is given, or of the channel records a worker takes (UdfStep, set_steps.h) — and turns
// a call that did not succeed cleanly over to Python.
#ifndef DFIR_RUNTIME_BINDINGS_UDF_CALLER_H_
#define DFIR_RUNTIME_BINDINGS_UDF_CALLER_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "udf_instance.h"
#include "udf_records.h"

namespace dfir::udf {

class UdfCaller {
 public:
  // Func `func` of `instance`, whose output i is the node's output `ports[i]`. Python's side:
  // `exceptions` maps a transaction id to the exception (code, user context id) a UDF raised for
  // it (ExceptionBoard.raised, read without a lock), `invoke`
  // runs invoked models (Closures.invoke_native), and `settle(result, error=None)` returns the
  // output sets of a call that did not succeed cleanly: `result` is (ret, [(index, Message)],
  // problems, (code, context) or None, the call's TransactionMeta, the last error it logged), or
  // None with `error`, the exception that kept the func from running.
  UdfCaller(std::shared_ptr<UdfInstance> instance, std::string func, std::vector<uint32_t> ports,
            pybind11::dict exceptions, pybind11::object invoke, pybind11::object settle);

  // The func on `inputs` of the transaction `latest`, whose user data are `user_data`. Called
  // with the GIL held; the proc runs with it released.
  ProcResult Run(const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs, const MsgMeta& latest,
                 const std::string& user_data);
  // Whether a call went as planned: it returned SUCCESS, noted no problem, raised no exception
  // and set no output with a return code.
  static bool Clean(const ProcResult& result);
  // Python's output sets for `result` (`settle`), the call's transaction given by its fields.
  pybind11::object Settle(const ProcResult& result, const MsgMeta& latest, const std::string& user_data);
  // The call layer: the output sets [[(port, Message)], ...] of a call on `inputs` (Messages).
  pybind11::object CallMessages(const pybind11::list& inputs);

  const std::vector<uint32_t>& ports() const { return ports_; }

 private:
  pybind11::object SettleWith(const ProcResult& result, const pybind11::object& transaction, const MsgMeta& latest);

  std::shared_ptr<UdfInstance> instance_;
  std::string func_;
  std::vector<uint32_t> ports_;
  pybind11::dict exceptions_;
  pybind11::object invoke_;
  pybind11::object settle_;
};

// How records name C++ UDF messages in this process (set by configure_udf_messages).
const RecordTypes& UdfRecordTypes();

}  // namespace dfir::udf

#endif  // DFIR_RUNTIME_BINDINGS_UDF_CALLER_H_
