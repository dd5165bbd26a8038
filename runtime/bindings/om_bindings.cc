// Bindings of the `.om` reader: `read_om(buffer)`, `copy_sealed(fd, size, name)`, `sha256(buffer)`
// and the schema constants.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cerrno>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "om_copy.h"
#include "om_reader.h"
#include "om_schema.h"
#include "sha256.h"

namespace py = pybind11;

namespace {

// A read-only, contiguous byte view of a Python buffer, held for this object's lifetime.
class ByteView {
 public:
  explicit ByteView(const py::object& source) {
    if (PyObject_GetBuffer(source.ptr(), &view_, PyBUF_SIMPLE) != 0) throw py::error_already_set();
  }
  ~ByteView() { PyBuffer_Release(&view_); }
  ByteView(const ByteView&) = delete;
  ByteView& operator=(const ByteView&) = delete;

  const uint8_t* data() const { return static_cast<const uint8_t*>(view_.buf); }
  size_t size() const { return static_cast<size_t>(view_.len); }

 private:
  Py_buffer view_{};
};

template <typename Array>
py::bytes AsBytes(const Array& bytes) {
  return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

py::dict NamedValues(const dfir::om::NamedValue* begin, const dfir::om::NamedValue* end) {
  py::dict values;
  for (const dfir::om::NamedValue* item = begin; item != end; ++item) values[item->name] = item->value;
  return values;
}

// The schema constants, named as in dfir/om/schema.py.
py::dict SchemaConstants() {
  namespace om = dfir::om;
  py::dict schema;
  schema["MAGIC"] = om::kMagic;
  schema["HEADER_SIZE"] = om::kHeaderSize;
  schema["FORMAT_VERSION"] = om::kFormatVersion;
  schema["OM_IR_VERSION"] = om::kOmIrVersion;
  schema["CHECKSUM_FIELD_SIZE"] = om::kChecksumFieldSize;
  schema["DIGEST_SIZE"] = om::kDigestSize;
  schema["CONTENT_DIGEST_AT"] = om::kContentDigestAt;
  schema["HEADER_DIGEST_AT"] = om::kHeaderDigestAt;
  schema["LENGTH_SATURATED"] = om::kLengthSaturated;
  schema["TABLE_HEADER_SIZE"] = om::kTableHeaderSize;
  schema["TABLE_ENTRY_SIZE"] = om::kTableEntrySize;
  schema["PARTITION_ALIGNMENT"] = om::kPartitionAlignment;
  schema["MAX_PARTITIONS"] = om::kMaxPartitions;
  schema["MAX_MODELS"] = om::kMaxModels;
  schema["NAME_SIZE"] = om::kNameSize;
  schema["PLATFORM_VERSION_SIZE"] = om::kPlatformVersionSize;
  schema["BUNDLE_VAR_INFO_SIZE"] = om::kBundleVarInfoSize;
  schema["HEADER_OFFSETS"] = NamedValues(std::begin(om::kHeaderOffsets), std::end(om::kHeaderOffsets));
  schema["MODEL_TYPES"] = NamedValues(std::begin(om::kModelTypes), std::end(om::kModelTypes));
  schema["PARTITION_TYPES"] = NamedValues(std::begin(om::kPartitionTypes), std::end(om::kPartitionTypes));
  schema["FIXED_HEADER_VALUES"] =
      NamedValues(std::begin(om::kFixedHeaderValues), std::end(om::kFixedHeaderValues));
  return schema;
}

void BindLayout(py::module_& m) {
  using dfir::om::Header;
  py::class_<Header>(m, "OmHeader", "The 256-byte header of a validated .om file.")
      .def_readonly("magic", &Header::magic)
      .def_readonly("headsize", &Header::headsize)
      .def_readonly("version", &Header::version)
      .def_property_readonly("checksum", [](const Header& h) { return AsBytes(h.checksum); })
      .def_readonly("length", &Header::length)
      .def_readonly("is_encrypt", &Header::is_encrypt)
      .def_readonly("is_checksum", &Header::is_checksum)
      .def_readonly("modeltype", &Header::modeltype)
      .def_readonly("genmode", &Header::genmode)
      .def_readonly("name", &Header::name)
      .def_readonly("ops", &Header::ops)
      .def_property_readonly("userdefineinfo", [](const Header& h) { return AsBytes(h.userdefineinfo); })
      .def_readonly("om_ir_version", &Header::om_ir_version)
      .def_readonly("model_num", &Header::model_num)
      .def_readonly("platform_version", &Header::platform_version)
      .def_readonly("platform_type", &Header::platform_type)
      .def_readonly("model_length", &Header::model_length)
      .def_readonly("need_check_os_cpu_info", &Header::need_check_os_cpu_info)
      .def_readonly("is_unknow_model", &Header::is_unknow_model);

  using dfir::om::Partition;
  py::class_<Partition>(m, "OmPartition", "A partition table entry; offset counts from its file's start.")
      .def_readonly("type", &Partition::type)
      .def_readonly("offset", &Partition::offset)
      .def_readonly("size", &Partition::size);

  using dfir::om::Model;
  py::class_<Model>(m, "OmModel", "One partition table with its partitions.")
      .def_readonly("partitions", &Model::partitions);

  using dfir::om::OmFile;
  py::class_<OmFile>(m, "OmFile", "The layout of a validated .om file (bundle members nested).")
      .def_readonly("base", &OmFile::base)
      .def_readonly("size", &OmFile::size)
      .def_readonly("header", &OmFile::header)
      .def_readonly("models", &OmFile::models)
      .def_readonly("var_size", &OmFile::var_size)
      .def_readonly("bundle", &OmFile::bundle)
      .def_readonly("member_names", &OmFile::member_names);
}

// `copy_sealed(fd, size, name)`: CopySealed without the GIL; a failed system call raises OSError.
py::tuple CopySealed(int fd, uint64_t size, const std::string& name) {
  dfir::om::SealedCopy copy;
  int error = 0;
  {
    py::gil_scoped_release release;
    try {
      copy = dfir::om::CopySealed(fd, size, name);
    } catch (const std::system_error& failure) {
      error = failure.code().value();
    }
  }
  if (error != 0) {
    errno = error;
    PyErr_SetFromErrno(PyExc_OSError);
    throw py::error_already_set();
  }
  return py::make_tuple(copy.fd, copy.size, std::move(copy.content));
}

}  // namespace

void SetupOmBindings(py::module_& m) {
  BindLayout(m);
  py::class_<dfir::om::ContentDigest>(m, "ContentDigest",
                                      "The SHA-256 of the bytes after a file's header, as copy_sealed computed it.")
      .def_readonly("size", &dfir::om::ContentDigest::size)
      .def_property_readonly("digest", [](const dfir::om::ContentDigest& known) { return AsBytes(known.digest); });
  m.def(
      "read_om",
      [](const py::object& source, const dfir::om::ContentDigest* known) {
        const ByteView bytes(source);
        py::gil_scoped_release release;
        return dfir::om::ReadOm(bytes.data(), bytes.size(), known);
      },
      py::arg("buffer"), py::arg("content_digest") = nullptr,
      "Validate the bytes of a contiguous buffer as an .om file and return its layout (no copy of "
      "the buffer); a defect raises GeError naming it. `content_digest`: the one copy_sealed "
      "computed of the copy this buffer maps, which the reader then need not compute.");
  m.def("copy_sealed", &CopySealed, py::arg("fd"), py::arg("size"), py::arg("name"),
        "Copy the first `size` bytes of the file open at `fd` into a new memfd named `name`, sealed "
        "against any change, hashing its content as it copies: (memfd, bytes copied, ContentDigest "
        "or None). The memfd is the caller's to close; OSError for a failed system call.");
  m.def(
      "sha256",
      [](const py::object& source) {
        const ByteView bytes(source);
        dfir::Sha256Digest digest;
        {
          py::gil_scoped_release release;
          digest = dfir::Sha256Of(bytes.data(), bytes.size());
        }
        return AsBytes(digest);
      },
      py::arg("buffer"), "The SHA-256 digest (32 bytes) of a contiguous buffer, as the reader computes it.");
  m.attr("OM_SCHEMA") = SchemaConstants();
}
