#pragma once

#include <string>

#include <coin/Clp_C_Interface.h>

namespace dlsched::policy {

// COIN-OR CLP's C interface, loaded the first time it is asked for
// (dlopen of libClp.so.1, Debian's coinor-libclp1). Linked instead, CLP
// would bring LAPACK, BLAS and gfortran into every dlsched command, 1.7 ms
// and some 150 page faults at each start (docs/performance.md), for the
// one policy that solves linear programs.
struct ClpApi {
  decltype(&Clp_newModel) new_model;
  decltype(&Clp_deleteModel) delete_model;
  decltype(&Clp_setLogLevel) set_log_level;
  decltype(&Clp_loadProblem) load_problem;
  decltype(&Clp_primal) primal;
  decltype(&Clp_isProvenOptimal) is_proven_optimal;
  decltype(&Clp_getColSolution) col_solution;
  decltype(&Clp_chgColumnLower) change_column_lower;
  decltype(&Clp_chgObjCoefficients) change_objective;
};

// The library, or nullptr with `why` (when given) saying why it could not
// be loaded. Loaded once per process; thread-safe.
const ClpApi* Clp(std::string* why = nullptr);

}  // namespace dlsched::policy
