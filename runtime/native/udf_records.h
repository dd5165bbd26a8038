// C++ UDF messages as channel records and back (plain C++: no Python headers). A worker fires a
// plain C++ UDF func straight on the records it takes from shared channels and puts the func's
// outputs as records, so a message between two C++ UDFs never becomes a Python object:
//
//   std::shared_ptr<HostFlowMsg> msg = MsgOfRecord(region, record, types);  // nullptr: Python's
//   ... the func runs on the messages ...
//   RecordOfMsg(*output, user_data, data_label, types, writer, record);     // then put it
//
// An input body stays where it is (the message holds the record's block reference); an output
// body is copied into the arena unless it already lies in one of its blocks (an input passed on).
#ifndef DFIR_RUNTIME_NATIVE_UDF_RECORDS_H_
#define DFIR_RUNTIME_NATIVE_UDF_RECORDS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "message.h"
#include "message_codec.h"
#include "region.h"
#include "udf_messages.h"

namespace dfir::udf {

// How records name what a C++ UDF message holds: the message kinds (positions of
// dfir.core.messages.Kind) and numpy's type numbers of the GE data types. Set once by the bindings.
struct RecordTypes {
  rt::MessageKind tensor = 0;
  rt::MessageKind raw = 0;
  rt::MessageKind empty = 0;
  rt::MessageKind object = 0;  // a user type's bytes (kUserType) reach a C++ UDF as raw data of that type
  std::map<int32_t, TensorDataType> dtype_of_num;  // several numbers may name one type (long, long long)
  std::map<TensorDataType, int32_t> num_of_dtype;
};

// Whether a C++ UDF reads `record` as it is: a tensor (of a data type the UDF can hold), raw
// bytes, a user type's bytes (kUserType: raw data of that msg type) or an empty message, without a
// return code (not an error, not another object).
bool TakesNatively(const rt::MessageRecord& record, const RecordTypes& types);

// The message a C++ UDF reads for `record` (TakesNatively), taking over its body reference.
std::shared_ptr<HostFlowMsg> MsgOfRecord(const std::shared_ptr<rt::Region>& region, const rt::MessageRecord& record,
                                         const RecordTypes& types);

// Fills `record` with `msg` (no return code) of a transaction whose user data are `user_data`,
// labelled `data_label` unless the message has its own; false when no arena room came before the
// writer's deadline or the region closed. RuntimeError for a tensor of a type numpy lacks.
bool RecordOfMsg(const HostFlowMsg& msg, const std::string& user_data, uint32_t data_label, const RecordTypes& types,
                 rt::Region& region, rt::BodyWriter& writer, rt::MessageRecord& record);

}  // namespace dfir::udf

#endif  // DFIR_RUNTIME_NATIVE_UDF_RECORDS_H_
