// The few CPython C-API entry points the bridge uses, found with dlsym in
// the running process, so that the bridge needs no Python headers and no
// DT_NEEDED on libpython (like the core). Objects are opaque pointers; only
// the stable ABI's PyMethodDef layout is spelled out. Looked up once; a
// process without Python gets an unusable table.
#pragma once

namespace chakrashim::bridge {

struct PythonApi {
  using Obj = void*;
  // PyMethodDef, as the stable ABI lays it out.
  struct MethodDef {
    const char* name;
    Obj (*meth)(Obj self, Obj args);
    int flags;
    const char* doc;
  };
  static constexpr int kVarArgs = 0x0001;     // METH_VARARGS
  static constexpr int kKeywords = 0x0002;    // METH_KEYWORDS
  // METH_FASTCALL: meth is then Obj (*)(Obj self, Obj const* args, ssize_t
  // nargs), cast as CPython's own tables do. No argument tuple is made for
  // the call (CPython 3.7 on; in the stable ABI from 3.10).
  static constexpr int kFastCall = 0x0080;
  static constexpr int kFileInput = 257;      // Py_file_input

  int (*gil_ensure)() = nullptr;                               // PyGILState_Ensure
  void (*gil_release)(int) = nullptr;                          // PyGILState_Release
  int (*gil_check)() = nullptr;                                // PyGILState_Check
  int (*is_initialized)() = nullptr;                           // Py_IsInitialized
  int (*is_finalizing)() = nullptr;  // Py_IsFinalizing (3.13) / _Py_IsFinalizing
  Obj (*dict_new)() = nullptr;                                 // PyDict_New
  Obj (*dict_get)(Obj, const char*) = nullptr;                 // PyDict_GetItemString
  int (*dict_set)(Obj, const char*, Obj) = nullptr;            // PyDict_SetItemString
  int (*set_item)(Obj, Obj, Obj) = nullptr;                    // PyObject_SetItem
  Obj (*compile)(const char*, const char*, int) = nullptr;     // Py_CompileString
  Obj (*eval_code)(Obj, Obj, Obj) = nullptr;                   // PyEval_EvalCode
  const char* (*as_utf8)(Obj) = nullptr;                       // PyUnicode_AsUTF8
  int (*is_true)(Obj) = nullptr;                               // PyObject_IsTrue
  Obj (*cfunction_new)(MethodDef*, Obj, Obj) = nullptr;        // PyCFunction_NewEx
  void (*inc_ref)(Obj) = nullptr;                              // Py_IncRef
  void (*dec_ref)(Obj) = nullptr;                              // Py_DecRef
  void (*err_clear)() = nullptr;                               // PyErr_Clear
  Obj (*err_occurred)() = nullptr;                             // PyErr_Occurred
  // Optional (not in usable()): the optimizer a step hook is called for;
  // module scopes (module_scopes.h).
  long (*tuple_size)(Obj) = nullptr;                           // PyTuple_Size (ssize_t)
  Obj (*tuple_get_item)(Obj, long) = nullptr;                  // PyTuple_GetItem, borrowed
  int (*del_item)(Obj, Obj) = nullptr;                         // PyObject_DelItem
  Obj (*bool_from_long)(long) = nullptr;                       // PyBool_FromLong
  Obj (*module_get_dict)(Obj) = nullptr;                       // PyModule_GetDict, borrowed
  long (*long_as_long)(Obj) = nullptr;                         // PyLong_AsLong
  int (*list_insert)(Obj, long, Obj) = nullptr;                // PyList_Insert
  long (*list_size)(Obj) = nullptr;                            // PyList_Size
  Obj (*list_get_item)(Obj, long) = nullptr;                   // PyList_GetItem, borrowed
  int (*sequence_del_item)(Obj, long) = nullptr;               // PySequence_DelItem
  Obj (*call_object)(Obj, Obj) = nullptr;                      // PyObject_CallObject
  Obj (*eval_get_frame)() = nullptr;                           // PyEval_GetFrame, borrowed
  Obj (*frame_get_back)(Obj) = nullptr;                        // PyFrame_GetBack, new reference
  Obj (*frame_get_code)(Obj) = nullptr;                        // PyFrame_GetCode (3.9), new reference
  Obj (*generic_get_attr)(Obj, Obj) = nullptr;                 // PyObject_GenericGetAttr, new reference
  Obj (*get_attr)(Obj, Obj) = nullptr;                         // PyObject_GetAttr, new reference
  Obj (*type_of)(Obj) = nullptr;                               // PyObject_Type, new reference
  // Optional: a name's lookup along a class's MRO with no descriptor run
  // and no error set (exported from 3.8 to 3.13 at least).
  Obj (*type_lookup)(Obj, Obj) = nullptr;                      // _PyType_Lookup, borrowed
  Obj (*intern_string)(const char*) = nullptr;                 // PyUnicode_InternFromString, new reference
  // Optional: Python's exit (python_exit.h).
  int (*callable_check)(Obj) = nullptr;                        // PyCallable_Check
  Obj (*import_get_module_dict)() = nullptr;                   // PyImport_GetModuleDict, borrowed
  Obj (*long_from_long)(long) = nullptr;                       // PyLong_FromLong
  Obj (*tuple_pack)(long, ...) = nullptr;                      // PyTuple_Pack (ssize_t n, ...)
  int (*add_pending_call)(int (*)(void*), void*) = nullptr;    // Py_AddPendingCall
  Obj (*save_thread)() = nullptr;                              // PyEval_SaveThread (the GIL's holder)
  void (*restore_thread)(Obj) = nullptr;                       // PyEval_RestoreThread
  Obj none = nullptr;                                          // &_Py_NoneStruct

  bool usable() const;
};

// The table for this process (dlsym'ed on first use; thread-safe).
const PythonApi& python();

// sys.modules[module].name, read from the dicts (borrowed; no bytecode runs,
// nothing is imported): null where the module is not imported or has no
// such attribute. With the GIL.
void* module_attribute(void* sys_modules, const char* module, const char* name);

// obj.<name> as the instance itself holds it (a new reference), or null
// (no error left set). No code runs: not the class's __getattribute__ nor
// __getattr__, and not a property or other descriptor (a name the class or
// its bases define is never read from an instance of it). And the
// instance's dict stays as it is: PyObject_GenericGetDict turned an
// instance's inline values into a dict for good (CPython 3.11), and every
// attribute load of the job's on that object took a slower path from then
// on (issue #52). `name` is an interned str; with the GIL.
void* instance_attribute(void* obj, void* name);

}  // namespace chakrashim::bridge
