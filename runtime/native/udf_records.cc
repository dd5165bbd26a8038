#include "udf_records.h"

#include <cstring>
#include <utility>
#include <vector>

#include "arena.h"
#include "shm.h"

namespace dfir::udf {

namespace {

// The bytes of `record`'s body as a Buffer: the block's, held by the record's reference, or a
// copy of inline bytes (the record's slot is reused once taken).
Buffer BodyBuffer(const std::shared_ptr<rt::Region>& region, const rt::MessageRecord& record) {
  if (record.inline_body != 0) {
    Buffer buffer = Buffer::Allocate(record.body_size, 64);
    std::memcpy(buffer.data, record.inline_bytes, record.body_size);
    return buffer;
  }
  Buffer buffer;
  buffer.owner = std::make_shared<rt::BlockReference>(region, record.block);
  buffer.data = region->base() + record.body_offset;
  buffer.size = record.body_size;
  buffer.block = record.block;
  return buffer;
}

MsgMeta MetaOfRecord(const rt::MessageRecord& record) {
  MsgMeta meta;
  meta.transaction_id = record.transaction_id;
  meta.start_time = static_cast<uint64_t>(record.start_time);
  meta.end_time = static_cast<uint64_t>(record.end_time);
  meta.flow_flags = record.flow_flags;
  return meta;
}

}  // namespace

bool TakesNatively(const rt::MessageRecord& record, const RecordTypes& types) {
  if (record.ret_code != 0) return false;
  if (record.kind == types.empty) return record.encoding == rt::BodyEncoding::kNone;
  if (record.kind == types.raw) return record.encoding == rt::BodyEncoding::kArray;
  if (record.kind == types.object) return record.encoding == rt::BodyEncoding::kUserType;
  return record.kind == types.tensor && record.encoding == rt::BodyEncoding::kArray &&
         types.dtype_of_num.count(record.dtype_num) != 0;
}

std::shared_ptr<HostFlowMsg> MsgOfRecord(const std::shared_ptr<rt::Region>& region, const rt::MessageRecord& record,
                                         const RecordTypes& types) {
  std::shared_ptr<HostFlowMsg> msg;
  if (record.kind == types.empty) {
    msg = HostFlowMsg::Empty(MsgType::MSG_TYPE_TENSOR_DATA, MetaOfRecord(record));
  } else if (record.kind == types.raw) {
    msg = HostFlowMsg::Raw(BodyBuffer(region, record), MetaOfRecord(record));
  } else if (record.kind == types.object) {
    msg = HostFlowMsg::Raw(BodyBuffer(region, record), MetaOfRecord(record));
    msg->SetMsgType(static_cast<MsgType>(record.dtype_num));
  } else {
    std::vector<int64_t> shape(record.shape, record.shape + record.ndim);
    msg = HostFlowMsg::Tensor(std::move(shape), types.dtype_of_num.at(record.dtype_num), BodyBuffer(region, record),
                              MetaOfRecord(record));
  }
  msg->SetLabels(record.data_label, record.route_label);
  return msg;
}

bool RecordOfMsg(const HostFlowMsg& msg, const std::string& user_data, uint32_t data_label, const RecordTypes& types,
                 rt::Region& region, rt::BodyWriter& writer, rt::MessageRecord& record) {
  const MsgMeta& meta = msg.meta();
  rt::TransactionInfo info;
  info.transaction_id = meta.transaction_id;
  info.start_time = static_cast<int64_t>(meta.start_time);
  info.end_time = static_cast<int64_t>(meta.end_time);
  info.flow_flags = meta.flow_flags;
  info.SetUserData(user_data.data(), user_data.size());
  const bool typed_raw = msg.payload() == Payload::kRaw && IsUserMsgType(msg.GetMsgType());
  const rt::MessageKind kind = msg.payload() == Payload::kTensor ? types.tensor
                               : typed_raw                       ? types.object
                               : msg.payload() == Payload::kRaw  ? types.raw
                                                                 : types.empty;
  rt::WriteHeader(info, kind, 0, msg.route_label(), msg.data_label() != 0 ? msg.data_label() : data_label, record);
  if (msg.payload() == Payload::kEmpty) return true;
  const Buffer& buffer = msg.buffer();
  const bool in_block = buffer.block != 0 && region.arena().Covers(buffer.block, buffer.data, buffer.size);
  if (typed_raw) {
    if (!writer.Write(rt::BodyEncoding::kUserType, buffer.data, buffer.size, in_block ? buffer.block : 0, record)) {
      return false;
    }
    record.dtype_num = static_cast<int32_t>(msg.GetMsgType());
    record.flags |= rt::kFlagTypedRaw;
    return true;
  }
  rt::ArrayLayout layout;
  if (msg.tensor() != nullptr) {
    const auto num = types.num_of_dtype.find(msg.tensor()->GetDataType());
    if (num == types.num_of_dtype.end()) {
      throw rt::RuntimeError("the UDF set a tensor of data type " +
                             std::to_string(static_cast<int32_t>(msg.tensor()->GetDataType())) +
                             ", which has no numpy type");
    }
    const std::vector<int64_t>& shape = msg.tensor()->GetShape();
    if (shape.size() > static_cast<size_t>(rt::kMaxDims)) {
      throw rt::RuntimeError("the UDF set a tensor of " + std::to_string(shape.size()) + " dimensions; a message " +
                             "holds at most " + std::to_string(rt::kMaxDims));
    }
    layout.dtype_num = num->second;
    layout.ndim = static_cast<int>(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) layout.shape[d] = shape[d];
  } else {
    layout.dtype_num = types.num_of_dtype.at(TensorDataType::DT_UINT8);
    layout.ndim = 1;
    layout.shape[0] = static_cast<int64_t>(buffer.size);
  }
  return writer.WriteArray(layout, buffer.data, buffer.size, in_block ? buffer.block : 0, record);
}

}  // namespace dfir::udf
