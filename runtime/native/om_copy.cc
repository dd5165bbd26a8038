#include "om_copy.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "sha256.h"

namespace dfir::om {
namespace {

// The copy runs at most kMaxLead bytes ahead of the hashing, which so reads each piece while it is
// still in cache: hashing bytes that have left it was about 1.5x slower on the machines measured.
// Pieces of kCopyPiece bytes are copied, of kHashPiece hashed.
constexpr uint64_t kCopyPiece = uint64_t{512} << 10;
constexpr uint64_t kHashPiece = uint64_t{256} << 10;
constexpr uint64_t kMaxLead = uint64_t{2} << 20;
// A smaller file is copied, then hashed, on the calling thread: a second would cost more than it saves.
constexpr uint64_t kHashOnOneThreadUpTo = uint64_t{1} << 20;
// A plan has at most this many ranges; the reader hashes any others itself.
constexpr size_t kMaxPlannedRanges = 4096;
// The memfd has the file's size and no write but this process's own mapping from the start; it is
// sealed against any write once the copy is done (so the bytes hashed are the bytes kept).
constexpr unsigned kSealsWhileCopying = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE;
constexpr unsigned kSealsOnceCopied = F_SEAL_WRITE | F_SEAL_SEAL;

[[noreturn]] void ThrowErrno(const char* call) { throw std::system_error(errno, std::generic_category(), call); }

class OwnedFd {
 public:
  explicit OwnedFd(int fd) : fd_(fd) {}
  ~OwnedFd() {
    if (fd_ >= 0) close(fd_);
  }
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// A shared writable mapping of the memfd that only this process holds: forked children do not
// inherit it (MADV_DONTFORK), and once the memfd is sealed against future writes no one can make
// another or write to it any other way. The copy is written through it, and hashed from it.
class PrivateWritableMapping {
 public:
  PrivateWritableMapping(int fd, uint64_t size) : size_(size) {
    if (size == 0) return;
    void* address = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (address == MAP_FAILED) ThrowErrno("mmap");
    data_ = static_cast<uint8_t*>(address);
    if (madvise(data_, size_, MADV_DONTFORK) != 0) {
      const int error = errno;
      munmap(data_, size_);
      errno = error;
      ThrowErrno("madvise(MADV_DONTFORK)");
    }
  }
  ~PrivateWritableMapping() { Unmap(); }
  PrivateWritableMapping(const PrivateWritableMapping&) = delete;
  PrivateWritableMapping& operator=(const PrivateWritableMapping&) = delete;
  uint8_t* data() const { return data_; }
  void Unmap() {
    if (data_ != nullptr) munmap(data_, size_);
    data_ = nullptr;
  }

 private:
  uint8_t* data_ = nullptr;
  uint64_t size_;
};

bool ReadFileAt(void* source, uint64_t offset, uint8_t* bytes, size_t count) {
  const int fd = *static_cast<const int*>(source);
  while (count != 0) {
    const ssize_t read = pread(fd, bytes, count, static_cast<off_t>(offset));
    if (read < 0 && errno == EINTR) continue;
    if (read <= 0) return false;
    bytes += read, offset += read, count -= read;
  }
  return true;
}

// Reads up to `count` bytes at `offset` of the file straight into `target`; the count read, 0 at
// the end of the file.
uint64_t ReadPiece(int source, uint64_t offset, uint64_t count, uint8_t* target) {
  for (;;) {
    const ssize_t read = pread(source, target, count, static_cast<off_t>(offset));
    if (read >= 0) return static_cast<uint64_t>(read);
    if (errno != EINTR) ThrowErrno("pread");
  }
}

// The copy and its hashing: the calling thread copies, a second thread hashes each piece as soon
// as it is copied, into every range that covers it, while the copy waits for the hashing
// whenever it is kMaxLead ahead.
class CopyPass {
 public:
  CopyPass(int source, uint64_t size, uint8_t* mapped, Sha256Ranges* ranges)
      : source_(source), size_(size), mapped_(mapped), ranges_(ranges), all_(ranges->size()) {
    for (size_t i = 0; i < all_.size(); ++i) all_[i] = i;
  }

  // Copies the file and hashes its planned ranges; the bytes copied.
  uint64_t Run() {
    if (all_.empty() || size_ <= kHashOnOneThreadUpTo) {
      uint64_t copied = 0;
      while (copied < size_) {
        const uint64_t count = CopyPiece(copied);
        if (count == 0) break;
        copied += count;
      }
      ranges_->Advance(mapped_, copied, all_);
      return copied;
    }
    std::thread hasher([this] { HashAsCopied(); });
    uint64_t copied = 0;
    try {
      while (copied < size_ && WaitForRoom(copied)) {
        const uint64_t count = CopyPiece(copied);
        if (count == 0) break;  // the file shrank: what was read is the copy
        copied += count;
        Publish(copied, false);
      }
    } catch (...) {
      Publish(copied, true);
      hasher.join();
      throw;
    }
    Publish(copied, true);
    hasher.join();
    if (hash_error_) std::rethrow_exception(hash_error_);
    return copied;
  }

 private:
  uint64_t CopyPiece(uint64_t copied) const {
    return ReadPiece(source_, copied, std::min(kCopyPiece, size_ - copied), mapped_ + copied);
  }

  // Waits until the copy at `copied` is less than kMaxLead ahead of the hashing; false once the
  // hashing has stopped (it failed).
  bool WaitForRoom(uint64_t copied) {
    std::unique_lock<std::mutex> lock(mutex_);
    hashing_moved_.wait(lock, [&] { return copied < hashed_ + kMaxLead || hashing_stopped_; });
    return !hashing_stopped_;
  }

  void Publish(uint64_t copied, bool done) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      copied_ = copied;
      done_ = done;
    }
    copy_moved_.notify_one();
  }

  void HashAsCopied() {
    try {
      uint64_t hashed = 0;
      for (;;) {
        uint64_t upto;
        bool done;
        {
          std::unique_lock<std::mutex> lock(mutex_);
          copy_moved_.wait(lock, [&] { return copied_ > hashed || done_; });
          upto = copied_, done = done_;
        }
        while (hashed < upto) {
          hashed = std::min(upto, hashed + kHashPiece);
          ranges_->Advance(mapped_, hashed, all_);
          {
            std::lock_guard<std::mutex> lock(mutex_);
            hashed_ = hashed;
          }
          hashing_moved_.notify_one();
        }
        if (done) return;
      }
    } catch (...) {
      hash_error_ = std::current_exception();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        hashing_stopped_ = true;
      }
      hashing_moved_.notify_one();
    }
  }

  const int source_;
  const uint64_t size_;
  uint8_t* const mapped_;
  Sha256Ranges* const ranges_;
  std::vector<size_t> all_;
  std::mutex mutex_;
  std::condition_variable copy_moved_, hashing_moved_;
  uint64_t copied_ = 0;  // guarded by mutex_, like the four below
  bool done_ = false;
  uint64_t hashed_ = 0;
  bool hashing_stopped_ = false;
  std::exception_ptr hash_error_;  // set before hashing_stopped_
};

}  // namespace

SealedCopy CopySealed(int source_fd, uint64_t size, const std::string& name) {
  Sha256Ranges ranges(PlanDigests(ReadFileAt, &source_fd, size, kMaxPlannedRanges));
  OwnedFd memfd(memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (memfd.get() < 0) ThrowErrno("memfd_create");
  if (ftruncate(memfd.get(), static_cast<off_t>(size)) != 0) ThrowErrno("ftruncate");
  PrivateWritableMapping mapped(memfd.get(), size);
  if (fcntl(memfd.get(), F_ADD_SEALS, kSealsWhileCopying) != 0) ThrowErrno("fcntl(F_ADD_SEALS)");
  SealedCopy copy;
  copy.size = CopyPass(source_fd, size, mapped.data(), &ranges).Run();
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (ranges.range(i).end <= copy.size) copy.digests.Add(ranges.range(i), ranges.Finish(mapped.data(), i));
  }
  mapped.Unmap();
  // Fails (EBUSY) while any other writable mapping of the memfd is left: the copy is then refused.
  if (fcntl(memfd.get(), F_ADD_SEALS, kSealsOnceCopied) != 0) ThrowErrno("fcntl(F_ADD_SEALS)");
  copy.fd = memfd.release();
  return copy;
}

}  // namespace dfir::om
