#include "shm.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace dfir::rt {
namespace {

[[noreturn]] void FailErrno(const std::string& what) {
  throw RuntimeError(what + ": " + std::strerror(errno));
}

std::atomic<uint64_t> fork_epoch{1};

void BumpForkEpoch() { fork_epoch.fetch_add(1); }

const bool kForkHookInstalled = [] { return pthread_atfork(nullptr, nullptr, &BumpForkEpoch) == 0; }();

}  // namespace

std::shared_ptr<SharedMemory> SharedMemory::Create(const std::string& name, size_t size) {
  int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) FailErrno("memfd_create(" + name + ")");
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    int error = errno;
    close(fd);
    errno = error;
    FailErrno("sizing shared memory '" + name + "' to " + std::to_string(size) + " bytes");
  }
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  int error = errno;
  close(fd);  // the mapping keeps the memory; no descriptor outlives this call
  if (base == MAP_FAILED) {
    errno = error;
    FailErrno("mapping " + std::to_string(size) + " bytes of shared memory '" + name + "'");
  }
  return std::shared_ptr<SharedMemory>(new SharedMemory(static_cast<uint8_t*>(base), size));
}

SharedMemory::~SharedMemory() { Detach(); }

void SharedMemory::Detach() {
  if (base_ != nullptr) munmap(base_, size_);
  base_ = nullptr;
}

void SharedMemory::Discard(size_t offset, size_t length) const {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t begin = (offset + page - 1) / page * page;
  size_t end = (offset + length) / page * page;
  if (base_ != nullptr && end > begin) madvise(base_ + begin, end - begin, MADV_REMOVE);
}

uint64_t ForkEpoch() {
  (void)kForkHookInstalled;
  return fork_epoch.load(std::memory_order_relaxed);
}

}  // namespace dfir::rt
