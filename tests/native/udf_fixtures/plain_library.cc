// A shared library that registers no C++ UDF funcs.
extern "C" int DfirTestPlainFunction() { return 42; }
