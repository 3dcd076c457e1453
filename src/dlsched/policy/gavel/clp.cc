#include "dlsched/policy/gavel/clp.h"

#include <dlfcn.h>

namespace dlsched::policy {
namespace {

struct Loaded {
  ClpApi api{};
  bool ok = false;
  std::string why;
};

template <typename F>
bool Bind(void* lib, const char* name, F* out, std::string* why) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  if (*out == nullptr) *why = std::string("libClp.so.1 has no ") + name;
  return *out != nullptr;
}

Loaded Load() {
  Loaded l;
  // Never closed: the functions are used until the process ends.
  void* lib = dlopen("libClp.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* e = dlerror();
    l.why = std::string(e != nullptr ? e : "libClp.so.1: cannot be loaded") +
            " (COIN-OR CLP: Debian's coinor-libclp1)";
    return l;
  }
  ClpApi& a = l.api;
  l.ok = Bind(lib, "Clp_newModel", &a.new_model, &l.why) &&
         Bind(lib, "Clp_deleteModel", &a.delete_model, &l.why) &&
         Bind(lib, "Clp_setLogLevel", &a.set_log_level, &l.why) &&
         Bind(lib, "Clp_loadProblem", &a.load_problem, &l.why) &&
         Bind(lib, "Clp_primal", &a.primal, &l.why) &&
         Bind(lib, "Clp_isProvenOptimal", &a.is_proven_optimal, &l.why) &&
         Bind(lib, "Clp_getColSolution", &a.col_solution, &l.why) &&
         Bind(lib, "Clp_chgColumnLower", &a.change_column_lower, &l.why) &&
         Bind(lib, "Clp_chgObjCoefficients", &a.change_objective, &l.why);
  return l;
}

}  // namespace

const ClpApi* Clp(std::string* why) {
  static const Loaded loaded = Load();
  if (!loaded.ok && why != nullptr) *why = loaded.why;
  return loaded.ok ? &loaded.api : nullptr;
}

}  // namespace dlsched::policy
