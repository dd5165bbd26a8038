// Shared helpers of the native core's unit tests: regions, records, child processes.
#ifndef DFIR_TESTS_NATIVE_HELPERS_H_
#define DFIR_TESTS_NATIVE_HELPERS_H_

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "blocking.h"
#include "ledger.h"
#include "message.h"
#include "message_codec.h"
#include "region.h"

namespace dfir::testing {

// A blocking scope that counts its brackets.
class CountingScope : public rt::BlockingScope {
 public:
  void Enter() override { ++entered; }
  void Leave() override { ++left; }
  int entered = 0;
  int left = 0;
};

// A region of `channels` shared channels of `capacity` (channel i rings doorbell i), plus
// `workers` worker slots and an arena of `arena_bytes`.
inline std::shared_ptr<rt::Region> MakeRegion(uint32_t channels, uint32_t capacity, uint64_t arena_bytes = 1 << 20,
                                              rt::ChannelKind kind = rt::ChannelKind::kShared, uint32_t workers = 1) {
  rt::RegionLayout layout;
  layout.bells = channels == 0 ? 1 : channels;
  for (uint32_t i = 0; i < channels; ++i) layout.channels.push_back(rt::ChannelSpec{kind, capacity, i});
  layout.workers = workers;
  layout.arena_bytes = arena_bytes;
  return rt::Region::Create(layout, "dfir-native-test");
}

inline rt::TransactionInfo Transaction(uint64_t id) {
  rt::TransactionInfo info;
  info.transaction_id = id;
  info.start_time = static_cast<int64_t>(id) * 10;
  info.end_time = static_cast<int64_t>(id) * 10 + 5;
  return info;
}

// A record of transaction `id` whose body is the `size` bytes of `body`, written by `writer`.
inline rt::MessageRecord RecordOf(uint64_t id, const std::vector<uint8_t>& body, rt::BodyWriter& writer,
                                  uint32_t data_label = 0) {
  rt::MessageRecord record;
  rt::WriteHeader(Transaction(id), /*kind=*/1, /*ret_code=*/0, /*route_label=*/0, data_label, record);
  if (!writer.Write(rt::BodyEncoding::kPickle, body.data(), body.size(), 0, record)) {
    throw std::runtime_error("no arena room for a test record");
  }
  return record;
}

// `size` bytes counting up from `seed`.
inline std::vector<uint8_t> Pattern(size_t size, uint8_t seed) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(seed + i * 7);
  return bytes;
}

// Runs `body` in a forked child, which exits with `body`'s result (0: success) or 99 for an
// exception; WaitChild returns that status, or 128 + n for signal n.
inline pid_t StartChild(const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid == 0) {
    int code = 99;
    try {
      code = body();
    } catch (...) {
    }
    _exit(code);
  }
  return pid;
}

inline int WaitChild(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

inline double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace dfir::testing

#endif  // DFIR_TESTS_NATIVE_HELPERS_H_
