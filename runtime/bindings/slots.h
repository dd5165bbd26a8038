// The fields of the runtime's slotted Python dataclasses (dfir.core.messages.Message and
// TransactionMeta) read and written in their slots: on the message path an attribute lookup costs
// more than the work around it. The binding files register each type's slots once (the codec's
// configuration) and then read and build instances through Get and NewRecordObject.
#ifndef DFIR_RUNTIME_BINDINGS_SLOTS_H_
#define DFIR_RUNTIME_BINDINGS_SLOTS_H_

#include <pybind11/pybind11.h>

#include <initializer_list>
#include <utility>

namespace dfir::bindings {

// Remembers where the slots named `names` (interned strings) of `type` (a class with writable
// __slots__, such as a frozen dataclass) live in its instances; replaces what `type` had.
void RegisterSlots(const pybind11::object& type, std::initializer_list<const pybind11::object*> names);

// `object.name`: read from its slot when `name` is a registered slot of exactly its type.
pybind11::object Get(const pybind11::handle& object, const pybind11::object& name);

// A new instance of `type` (not initialized by __init__) with `fields` set: registered slots
// directly, other fields through object.__setattr__.
pybind11::object NewRecordObject(const pybind11::object& type,
                                 std::initializer_list<std::pair<const pybind11::object*, pybind11::object>> fields);

}  // namespace dfir::bindings

#endif  // DFIR_RUNTIME_BINDINGS_SLOTS_H_
