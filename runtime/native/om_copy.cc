#include "om_copy.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <optional>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

#include "om_schema.h"

namespace dfir::om {
namespace {

// The file is read in pieces of kPiece bytes into kSlots buffers, which so stay in cache between
// the read, the hashing and the copy: hashing bytes another core had just written into the memfd
// ran at about half the speed on the machines measured.
constexpr uint64_t kPiece = uint64_t{512} << 10;
constexpr size_t kSlots = 4;
// A smaller file is copied, then hashed, on the calling thread: a second would cost more than it saves.
constexpr uint64_t kOneThreadUpTo = uint64_t{1} << 20;
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
// another or write to it any other way. The copy is written through it.
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

// Reads up to `count` bytes at `offset` of the file into `target`: fewer only at its end.
uint64_t ReadPiece(int source, uint64_t offset, uint64_t count, uint8_t* target) {
  uint64_t done = 0;
  while (done < count) {
    const ssize_t read = pread(source, target + done, count - done, static_cast<off_t>(offset + done));
    if (read == 0) break;
    if (read > 0) {
      done += static_cast<uint64_t>(read);
    } else if (errno != EINTR) {
      ThrowErrno("pread");
    }
  }
  return done;
}

// The content digest of a copy as it is read: the bytes after its header up to where the header,
// in the copy's first piece, says its model ends (a signature trailer may follow).
class ContentHash {
 public:
  // Feeds the bytes of [offset, offset + count) of the copy, held at `bytes`; pieces come in order,
  // the first at least kHeaderSize bytes long unless it is the whole copy.
  void Add(uint64_t offset, const uint8_t* bytes, uint64_t count) {
    if (offset == 0 && count >= kHeaderSize) {
      const uint64_t model_length = LoadU64(bytes + header_offset::kModelLength);
      end_ = kHeaderSize + std::min(model_length, UINT64_MAX - kHeaderSize);
    }
    const uint64_t first = std::max<uint64_t>(offset, kHeaderSize);
    const uint64_t last = std::min(offset + count, end_);
    if (first < last) stream_.Update(bytes + (first - offset), last - first);
    hashed_to_ = std::max(hashed_to_, last);
  }

  // The digest, when the copy held all the bytes it covers.
  std::optional<ContentDigest> Finish() {
    if (end_ == 0 || hashed_to_ != end_) return std::nullopt;
    return ContentDigest{end_ - kHeaderSize, stream_.Finish()};
  }

 private:
  Sha256Stream stream_;
  uint64_t end_ = 0;  // 0 until the header is read
  uint64_t hashed_to_ = 0;
};

// The copy and its hashing: the calling thread reads each piece into a free slot and hashes it;
// a second thread copies the slots, in order, into the mapping.
class CopyPass {
 public:
  CopyPass(int source, uint64_t size, uint8_t* mapped) : source_(source), size_(size), mapped_(mapped) {}

  // Copies the file, hashing its content; the bytes copied.
  uint64_t Run(ContentHash* content) {
    if (size_ <= kOneThreadUpTo) {
      const uint64_t copied = ReadPiece(source_, 0, size_, mapped_);
      content->Add(0, mapped_, copied);
      return copied;
    }
    for (auto& slot : slots_) slot = std::make_unique<uint8_t[]>(kPiece);
    std::thread copier([this] { CopyAsRead(); });
    uint64_t read = 0;
    try {
      for (uint64_t piece = 0; read < size_; ++piece) {
        uint8_t* slot = FreeSlot(piece);
        const uint64_t count = ReadPiece(source_, read, std::min(kPiece, size_ - read), slot);
        content->Add(read, slot, count);
        counts_[piece % kSlots] = count;
        read += count;
        Publish(piece + 1, count < kPiece);
        if (count < kPiece) break;  // the end of the file (it shrank: what was read is the copy)
      }
    } catch (...) {
      Publish(published_, true);
      copier.join();
      throw;
    }
    Publish(published_, true);
    copier.join();
    return read;
  }

 private:
  // The slot of piece `piece`, once the copy of the piece it last held is done.
  uint8_t* FreeSlot(uint64_t piece) {
    std::unique_lock<std::mutex> lock(mutex_);
    copied_moved_.wait(lock, [&] { return piece < copied_ + kSlots; });
    return slots_[piece % kSlots].get();
  }

  void Publish(uint64_t pieces, bool done) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      published_ = pieces;
      done_ = done;
    }
    read_moved_.notify_one();
  }

  void CopyAsRead() {
    for (uint64_t piece = 0;; ++piece) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        read_moved_.wait(lock, [&] { return published_ > piece || done_; });
        if (published_ <= piece) return;
      }
      std::memcpy(mapped_ + piece * kPiece, slots_[piece % kSlots].get(), counts_[piece % kSlots]);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        copied_ = piece + 1;
      }
      copied_moved_.notify_one();
    }
  }

  const int source_;
  const uint64_t size_;
  uint8_t* const mapped_;
  std::unique_ptr<uint8_t[]> slots_[kSlots];
  uint64_t counts_[kSlots] = {};  // the bytes each slot holds, set before its piece is published
  std::mutex mutex_;
  std::condition_variable read_moved_, copied_moved_;
  uint64_t published_ = 0;  // pieces read and hashed; guarded by mutex_, like the two below
  bool done_ = false;
  uint64_t copied_ = 0;     // pieces copied
};

}  // namespace

SealedCopy CopySealed(int source_fd, uint64_t size, const std::string& name) {
  OwnedFd memfd(memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (memfd.get() < 0) ThrowErrno("memfd_create");
  if (ftruncate(memfd.get(), static_cast<off_t>(size)) != 0) ThrowErrno("ftruncate");
  PrivateWritableMapping mapped(memfd.get(), size);
  if (fcntl(memfd.get(), F_ADD_SEALS, kSealsWhileCopying) != 0) ThrowErrno("fcntl(F_ADD_SEALS)");
  ContentHash content;
  SealedCopy copy;
  copy.size = CopyPass(source_fd, size, mapped.data()).Run(&content);
  copy.content = content.Finish();
  mapped.Unmap();
  // Fails (EBUSY) while any other writable mapping of the memfd is left: the copy is then refused.
  if (fcntl(memfd.get(), F_ADD_SEALS, kSealsOnceCopied) != 0) ThrowErrno("fcntl(F_ADD_SEALS)");
  copy.fd = memfd.release();
  return copy;
}

}  // namespace dfir::om
