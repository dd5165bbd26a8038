#include "udf_library.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "udf_context.h"
#include "udf_error.h"
#include "udf_log.h"

namespace dfir::udf {

namespace {

using RegistryFn = const FlowFunc::FuncRegistry* (*)();
using AbiVersionFn = int32_t (*)();
using SetHostFn = void (*)(const FlowFunc::detail::HostApi*);

std::string Text(const FlowFunc::AscendString& text) { return std::string(text.GetString(), text.GetLength()); }

// FlowBufferFactory::AllocTensor of every library: a failure is an error log record.
void AllocTensorForLibrary(const std::vector<int64_t>& shape, FlowFunc::TensorDataType dtype, uint32_t align,
                           std::shared_ptr<FlowFunc::Tensor>& tensor) {
  std::string problem;
  tensor = AllocHostTensor("FlowBufferFactory::AllocTensor", shape, dtype, align, problem);
  if (tensor == nullptr) HostLogSink(kLogError, problem.c_str());
}

const FlowFunc::detail::HostApi kHostApi{&HostLogSink, &AllocTensorForLibrary};

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
  const auto set_host = Symbol<SetHostFn>(handle, "DfirFlowFuncSetHost");
  if (registry == nullptr || abi_version == nullptr || set_host == nullptr) {
    throw UdfError("C++ UDF library " + name + " registers no funcs: include \"flow_func/meta_flow_func.h\" or "
                   "\"flow_func/meta_multi_func.h\" and register them with REGISTER_FLOW_FUNC or FLOW_FUNC_REGISTRAR");
  }
  if (abi_version() != FlowFunc::kFlowFuncAbiVersion) {
    throw UdfError("C++ UDF library " + name + " was built against flow_func ABI " + std::to_string(abi_version()) +
                   ", this runtime has ABI " + std::to_string(FlowFunc::kFlowFuncAbiVersion) + "; rebuild it");
  }
  const FlowFunc::FuncRegistry* funcs = registry();
  if (!funcs->refused.empty()) {
    const FlowFunc::AscendString& refused = funcs->refused.front();
    throw UdfError("C++ UDF library " + name + (refused.GetLength() == 0 ? std::string(" registers a func without a name")
                                                : " registers func '" + Text(refused) + "' twice"));
  }
  set_host(&kHostApi);
  return std::shared_ptr<UdfLibrary>(new UdfLibrary(name, funcs));
}

std::vector<std::string> UdfLibrary::FuncNames() const {
  std::vector<std::string> names;
  for (const auto& entry : registry_->multi) names.push_back(Text(entry.first));
  for (const auto& entry : registry_->multi_with_q) names.push_back(Text(entry.first));
  for (const auto& entry : registry_->single) names.push_back(Text(entry.first));
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace dfir::udf
