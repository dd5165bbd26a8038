// Bindings of numpy's memory: the allocator hooks (NEP 49) over a region's native
// ArenaAllocator (runtime/native/arena_allocator.h), which place a worker thread's large arrays
// in the tensor arena, and `aligned_zeros`, the aligned, zero-filled buffers of UDF projects.
#include "arena_bindings.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "arena_allocator.h"
#include "numpy_api.h"
#include "runtime_bindings.h"

namespace py = pybind11;

namespace dfir::bindings {

namespace {

// numpy's hooks over a native ArenaAllocator; freed with the capsule numpy holds. Requests below
// the allocator's threshold go to the handler that was current before (numpy's own, whose cache
// of small buffers makes the many small arrays of a message cheap), as does everything that does
// not lie in the arena.
struct NumpyArenaHandler {
  PyDataMem_Handler handler;
  rt::ArenaAllocator allocator;
  py::object previous_capsule;  // keeps `previous` alive
  PyDataMem_Handler* previous = nullptr;

  PyDataMemAllocator& fallback() const { return previous->allocator; }
};

void* HandlerMalloc(void* context, size_t size) {
  auto* hooks = static_cast<NumpyArenaHandler*>(context);
  if (size < hooks->allocator.threshold()) return hooks->fallback().malloc(hooks->fallback().ctx, size);
  return hooks->allocator.Allocate(size);
}

void* HandlerCalloc(void* context, size_t count, size_t element_size) {
  auto* hooks = static_cast<NumpyArenaHandler*>(context);
  if (count * element_size < hooks->allocator.threshold()) {
    return hooks->fallback().calloc(hooks->fallback().ctx, count, element_size);
  }
  return hooks->allocator.AllocateZeroed(count, element_size);
}

void* HandlerRealloc(void* context, void* data, size_t size) {
  auto* hooks = static_cast<NumpyArenaHandler*>(context);
  if (data != nullptr && hooks->allocator.InArena(data)) return hooks->allocator.Reallocate(data, size);
  return hooks->fallback().realloc(hooks->fallback().ctx, data, size);
}

void HandlerFree(void* context, void* data, size_t size) {
  auto* hooks = static_cast<NumpyArenaHandler*>(context);
  if (data != nullptr && hooks->allocator.InArena(data)) {
    hooks->allocator.Free(data);
  } else {
    hooks->fallback().free(hooks->fallback().ctx, data, size);
  }
}

void DestroyHandler(PyObject* capsule) { delete static_cast<NumpyArenaHandler*>(PyCapsule_GetContext(capsule)); }

// A zero-filled C-contiguous array of `shape` and `dtype` whose data start on an `align`-byte
// boundary (a power of two): a view into a uint8 array `align - 1` bytes longer than needed.
py::object AlignedZeros(const std::vector<npy_intp>& shape, const py::object& dtype, npy_intp align) {
  if (align <= 0 || (align & (align - 1)) != 0) throw py::value_error("align must be a power of two");
  if (shape.size() > NPY_MAXDIMS) throw py::value_error("too many dimensions");
  PyArray_Descr* descr = nullptr;
  if (PyArray_DescrConverter(dtype.ptr(), &descr) != NPY_SUCCEED) throw py::error_already_set();
  npy_intp count = 1;
  for (const npy_intp dim : shape) {
    if (dim < 0) {
      Py_DECREF(descr);
      throw py::value_error("negative dimension");
    }
    count *= dim;
  }
  npy_intp size = count * PyDataType_ELSIZE(descr) + align - 1;
  auto raw = py::reinterpret_steal<py::object>(PyArray_ZEROS(1, &size, NPY_UINT8, 0));
  if (!raw) {
    Py_DECREF(descr);
    throw py::error_already_set();
  }
  auto* bytes = static_cast<char*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(raw.ptr())));
  char* start = bytes + (-reinterpret_cast<uintptr_t>(bytes) & static_cast<uintptr_t>(align - 1));
  // PyArray_NewFromDescr steals `descr`.
  PyObject* array = PyArray_NewFromDescr(&PyArray_Type, descr, static_cast<int>(shape.size()),
                                         const_cast<npy_intp*>(shape.data()), nullptr, start, NPY_ARRAY_CARRAY, nullptr);
  if (array == nullptr) throw py::error_already_set();
  auto result = py::reinterpret_steal<py::object>(array);
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(array), raw.release().ptr()) != 0) {
    throw py::error_already_set();
  }
  return result;
}

}  // namespace

void UseArenaAllocator(const std::shared_ptr<rt::Region>& region, uint64_t threshold) {
  auto* hooks = new NumpyArenaHandler{{}, rt::ArenaAllocator(region, threshold)};
  hooks->previous_capsule = py::reinterpret_steal<py::object>(PyDataMem_GetHandler());
  hooks->previous = hooks->previous_capsule
                        ? static_cast<PyDataMem_Handler*>(PyCapsule_GetPointer(hooks->previous_capsule.ptr(), "mem_handler"))
                        : nullptr;
  if (hooks->previous == nullptr) {
    delete hooks;
    throw py::error_already_set();
  }
  std::snprintf(hooks->handler.name, sizeof hooks->handler.name, "dfir_arena");
  hooks->handler.version = 1;
  hooks->handler.allocator = {hooks, HandlerMalloc, HandlerCalloc, HandlerRealloc, HandlerFree};
  PyObject* capsule = PyCapsule_New(&hooks->handler, "mem_handler", &DestroyHandler);
  if (capsule == nullptr || PyCapsule_SetContext(capsule, hooks) != 0) {
    delete hooks;
    throw py::error_already_set();
  }
  py::object handler = py::reinterpret_steal<py::object>(capsule);
  PyObject* previous = PyDataMem_SetHandler(handler.ptr());
  if (previous == nullptr) throw py::error_already_set();
  Py_DECREF(previous);
}

void BindArena(py::module_& m) {
  m.def("aligned_zeros", &AlignedZeros, py::arg("shape"), py::arg("dtype"), py::arg("align"),
        "A zero-filled array of `shape` and `dtype` (anything numpy.dtype takes) whose data start on an "
        "`align`-byte boundary (a power of two).");
}

}  // namespace dfir::bindings
