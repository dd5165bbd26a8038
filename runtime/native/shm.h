// Anonymous shared memory: a memfd mapped read-write. Nothing appears under /dev/shm, and the
// memory goes back to the system when the last process holding a mapping unmaps it or exits,
// so a crashed process cannot leave a segment behind (plain C++: no Python headers).
#ifndef DFIR_RUNTIME_NATIVE_SHM_H_
#define DFIR_RUNTIME_NATIVE_SHM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace dfir::rt {

// A failure of the runtime core (a system call, a full arena, a malformed message). The message
// says what failed and the numbers involved; the bindings turn it into dfir.core.errors.GeError.
class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SharedMemory {
 public:
  // A zero-filled mapping of `size` bytes (sparse: pages cost memory once touched). `name`
  // shows in /proc/<pid>/maps as /memfd:<name>. Children forked later share the mapping.
  static std::shared_ptr<SharedMemory> Create(const std::string& name, size_t size);
  ~SharedMemory();
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;

  uint8_t* base() const { return base_; }
  size_t size() const { return size_; }

  // Returns the pages of [offset, offset + length) to the system, in every process; they read
  // as zeros afterwards. Both ends are rounded inwards to whole pages.
  void Discard(size_t offset, size_t length) const;

  // Unmaps now (in this process only); later access faults. For a forked child that inherited
  // a mapping it will never use.
  void Detach();

 private:
  SharedMemory(uint8_t* base, size_t size) : base_(base), size_(size) {}
  uint8_t* base_;
  size_t size_;
};

// A number that changes in a child process right after fork(). Objects that own a share of
// shared state record it and give the share back only in the process that took it.
uint64_t ForkEpoch();

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_SHM_H_
