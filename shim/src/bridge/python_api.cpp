#include "bridge/python_api.h"

#include <cstddef>

#include <dlfcn.h>

namespace chakrashim::bridge {

namespace {

template <typename F>
void bind(F& fn, const char* name) {
  fn = reinterpret_cast<F>(::dlsym(RTLD_DEFAULT, name));
}

PythonApi load() {
  PythonApi a;
  bind(a.gil_ensure, "PyGILState_Ensure");
  bind(a.gil_release, "PyGILState_Release");
  bind(a.save_thread, "PyEval_SaveThread");
  bind(a.restore_thread, "PyEval_RestoreThread");
  bind(a.gil_check, "PyGILState_Check");
  bind(a.is_initialized, "Py_IsInitialized");
  bind(a.is_finalizing, "Py_IsFinalizing");
  if (!a.is_finalizing) bind(a.is_finalizing, "_Py_IsFinalizing");
  bind(a.dict_new, "PyDict_New");
  bind(a.dict_get, "PyDict_GetItemString");
  bind(a.dict_set, "PyDict_SetItemString");
  bind(a.set_item, "PyObject_SetItem");
  bind(a.compile, "Py_CompileString");
  bind(a.eval_code, "PyEval_EvalCode");
  bind(a.as_utf8, "PyUnicode_AsUTF8");
  bind(a.is_true, "PyObject_IsTrue");
  bind(a.cfunction_new, "PyCFunction_NewEx");
  bind(a.inc_ref, "Py_IncRef");
  bind(a.dec_ref, "Py_DecRef");
  bind(a.err_clear, "PyErr_Clear");
  bind(a.err_occurred, "PyErr_Occurred");
  bind(a.tuple_size, "PyTuple_Size");
  bind(a.tuple_get_item, "PyTuple_GetItem");
  bind(a.del_item, "PyObject_DelItem");
  bind(a.bool_from_long, "PyBool_FromLong");
  bind(a.module_get_dict, "PyModule_GetDict");
  bind(a.long_as_long, "PyLong_AsLong");
  bind(a.list_insert, "PyList_Insert");
  bind(a.list_size, "PyList_Size");
  bind(a.list_get_item, "PyList_GetItem");
  bind(a.sequence_del_item, "PySequence_DelItem");
  bind(a.call_object, "PyObject_CallObject");
  bind(a.eval_get_frame, "PyEval_GetFrame");
  bind(a.frame_get_back, "PyFrame_GetBack");
  bind(a.frame_get_code, "PyFrame_GetCode");
  bind(a.generic_get_attr, "PyObject_GenericGetAttr");
  bind(a.get_attr, "PyObject_GetAttr");
  bind(a.type_of, "PyObject_Type");
  bind(a.type_lookup, "_PyType_Lookup");
  bind(a.intern_string, "PyUnicode_InternFromString");
  bind(a.callable_check, "PyCallable_Check");
  bind(a.import_get_module_dict, "PyImport_GetModuleDict");
  bind(a.long_from_long, "PyLong_FromLong");
  bind(a.tuple_pack, "PyTuple_Pack");
  bind(a.add_pending_call, "Py_AddPendingCall");
  a.none = ::dlsym(RTLD_DEFAULT, "_Py_NoneStruct");
  return a;
}

}  // namespace

bool PythonApi::usable() const {
  return gil_ensure && gil_release && gil_check && is_initialized && dict_new &&
         dict_get && dict_set && set_item && compile && eval_code && as_utf8 && is_true && cfunction_new &&
         inc_ref && dec_ref && err_clear && err_occurred && none;
}

void* module_attribute(void* sys_modules, const char* module, const char* name) {
  const PythonApi& py = python();
  if (!sys_modules || !py.module_get_dict) return nullptr;
  void* m = py.dict_get(sys_modules, module);
  void* d = m ? py.module_get_dict(m) : nullptr;
  return d ? py.dict_get(d, name) : nullptr;
}

void* instance_attribute(void* obj, void* name) {
  const PythonApi& py = python();
  if (!obj || !name || !py.generic_get_attr || !py.get_attr || !py.type_of) return nullptr;
  // Whether the class (or a base) defines `name`, asked once per class and
  // name: a few entries, each holding its class, so that an address is
  // never another class's. With the GIL, which is this cache's lock.
  struct Known {
    void* type;
    void* name;
    bool defined;
  };
  static Known known[8];
  static std::size_t used = 0;
  void* type = py.type_of(obj);  // a new reference
  if (!type) {
    py.err_clear();
    return nullptr;
  }
  bool defined = true;  // unknown: read nothing
  bool found = false;
  for (std::size_t i = 0; i < used; ++i) {
    if (known[i].type == type && known[i].name == name) {
      defined = known[i].defined;
      found = true;
      break;
    }
  }
  if (!found) {
    if (py.type_lookup) {
      // The class's MRO dicts only: no descriptor's __get__, no
      // metaclass's __getattr__ runs.
      defined = py.type_lookup(type, name) != nullptr;
    } else if (void* on_class = py.get_attr(type, name)) {
      // type.__getattribute__ on the class (a metaclass of the job's could
      // run code here: only where _PyType_Lookup is not exported).
      py.dec_ref(on_class);
    } else {
      py.err_clear();
      defined = false;
    }
    if (used < sizeof(known) / sizeof(known[0])) {
      py.inc_ref(type);  // kept: the entry's address stays this class's
      known[used++] = {type, name, defined};
    }
  }
  py.dec_ref(type);
  if (defined) return nullptr;
  void* value = py.generic_get_attr(obj, name);  // instance dict or inline values only
  if (!value) py.err_clear();
  return value;
}

const PythonApi& python() {
  static const PythonApi api = load();
  return api;
}

}  // namespace chakrashim::bridge
