#include "slots.h"

#include <structmember.h>

#include <algorithm>
#include <vector>

namespace py = pybind11;

namespace dfir::bindings {

namespace {

struct SlotTable {
  PyTypeObject* type = nullptr;
  std::vector<std::pair<PyObject*, Py_ssize_t>> offsets;  // interned name -> offset in an instance
};

std::vector<SlotTable>& Slots() {
  static auto* slots = new std::vector<SlotTable>();  // never destroyed: outlives interpreter teardown order
  return *slots;
}

// The offset of slot `name` in an instance of exactly `type`, or -1 (not registered).
Py_ssize_t SlotOffset(PyTypeObject* type, PyObject* name) {
  for (const SlotTable& table : Slots()) {
    if (table.type != type) continue;
    for (const auto& [slot, offset] : table.offsets) {
      if (slot == name) return offset;
    }
  }
  return -1;
}

}  // namespace

void RegisterSlots(const py::object& type, std::initializer_list<const py::object*> names) {
  SlotTable table;
  table.type = reinterpret_cast<PyTypeObject*>(type.ptr());
  for (const py::object* name : names) {
    PyObject* descriptor = PyObject_GetAttr(type.ptr(), name->ptr());
    if (descriptor == nullptr) {
      PyErr_Clear();
      continue;
    }
    if (Py_IS_TYPE(descriptor, &PyMemberDescr_Type)) {
      PyMemberDef* member = reinterpret_cast<PyMemberDescrObject*>(descriptor)->d_member;
      if (member->type == T_OBJECT_EX && (member->flags & READONLY) == 0) {
        table.offsets.emplace_back(name->ptr(), member->offset);
      }
    }
    Py_DECREF(descriptor);
  }
  std::vector<SlotTable>& slots = Slots();
  slots.erase(std::remove_if(slots.begin(), slots.end(), [&](const SlotTable& t) { return t.type == table.type; }),
              slots.end());
  slots.push_back(std::move(table));
}

py::object Get(const py::handle& object, const py::object& name) {
  Py_ssize_t offset = SlotOffset(Py_TYPE(object.ptr()), name.ptr());
  if (offset >= 0) {
    PyObject* value = *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(object.ptr()) + offset);
    if (value != nullptr) return py::reinterpret_borrow<py::object>(value);
  }
  PyObject* value = PyObject_GetAttr(object.ptr(), name.ptr());
  if (value == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(value);
}

py::object NewRecordObject(const py::object& type,
                           std::initializer_list<std::pair<const py::object*, py::object>> fields) {
  static PyObject* no_arguments = PyTuple_New(0);
  PyTypeObject* cls = reinterpret_cast<PyTypeObject*>(type.ptr());
  py::object instance = py::reinterpret_steal<py::object>(PyBaseObject_Type.tp_new(cls, no_arguments, nullptr));
  if (!instance) throw py::error_already_set();
  for (const auto& [name, value] : fields) {
    Py_ssize_t offset = SlotOffset(cls, name->ptr());
    if (offset >= 0) {
      PyObject** slot = reinterpret_cast<PyObject**>(reinterpret_cast<char*>(instance.ptr()) + offset);
      PyObject* previous = *slot;
      *slot = py::object(value).release().ptr();
      Py_XDECREF(previous);
    } else if (PyObject_GenericSetAttr(instance.ptr(), name->ptr(), value.ptr()) != 0) {
      throw py::error_already_set();
    }
  }
  return instance;
}

}  // namespace dfir::bindings
