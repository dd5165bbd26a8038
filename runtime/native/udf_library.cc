#include "udf_library.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "udf_error.h"
#include "udf_log.h"

namespace dfir::udf {

namespace {

using RegistryFn = const FlowFunc::FuncRegistry* (*)();
using AbiVersionFn = int32_t (*)();
using SetLogSinkFn = void (*)(FlowFunc::LogSink);

void WriteAll(int fd, const uint8_t* data, size_t size, const std::string& name) {
  while (size > 0) {
    const ssize_t written = ::write(fd, data, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) throw UdfError("cannot stage C++ UDF library " + name + ": " + std::strerror(errno));
    data += written;
    size -= static_cast<size_t>(written);
  }
}

// A file descriptor holding the bytes: a memfd, or a temporary file already unlinked.
int StageBytes(const uint8_t* data, size_t size, const std::string& name) {
  int fd = ::memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) {
    const char* folder = std::getenv("TMPDIR");
    std::string path = std::string(folder != nullptr ? folder : "/tmp") + "/dfir-udf-XXXXXX";
    fd = ::mkstemp(&path[0]);
    if (fd < 0) throw UdfError("cannot stage C++ UDF library " + name + ": " + std::strerror(errno));
    ::unlink(path.c_str());
  }
  try {
    WriteAll(fd, data, size, name);
  } catch (...) {
    ::close(fd);
    throw;
  }
  return fd;
}

template <typename Fn>
Fn Symbol(void* handle, const char* symbol) {
  return reinterpret_cast<Fn>(::dlsym(handle, symbol));
}

}  // namespace

std::shared_ptr<UdfLibrary> UdfLibrary::Load(const uint8_t* data, size_t size, const std::string& name) {
  // The descriptor stays open while the library is loaded (for good): the dynamic loader knows
  // the library by this path, and a closed descriptor's number, reused, would name it again.
  const int fd = StageBytes(data, size, name);
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = ::dlerror();
    ::close(fd);
    throw UdfError("cannot load C++ UDF library " + name + ": " + (error != nullptr ? error : "unknown error"));
  }
  const auto registry = Symbol<RegistryFn>(handle, "DfirFlowFuncRegistry");
  const auto abi_version = Symbol<AbiVersionFn>(handle, "DfirFlowFuncAbiVersion");
  const auto set_log_sink = Symbol<SetLogSinkFn>(handle, "DfirFlowFuncSetLogSink");
  if (registry == nullptr || abi_version == nullptr || set_log_sink == nullptr) {
    throw UdfError("C++ UDF library " + name + " registers no funcs: include \"flow_func/flow_func.h\" and "
                   "register them with FLOW_FUNC_REGISTRAR");
  }
  if (abi_version() != FlowFunc::kFlowFuncAbiVersion) {
    throw UdfError("C++ UDF library " + name + " was built against flow_func ABI " + std::to_string(abi_version()) +
                   ", this runtime has ABI " + std::to_string(FlowFunc::kFlowFuncAbiVersion) + "; rebuild it");
  }
  const FlowFunc::FuncRegistry* funcs = registry();
  if (!funcs->Duplicates().empty()) {
    throw UdfError("C++ UDF library " + name + " registers func '" + funcs->Duplicates().front() + "' twice");
  }
  set_log_sink(&HostLogSink);
  return std::shared_ptr<UdfLibrary>(new UdfLibrary(name, funcs));
}

}  // namespace dfir::udf
