#include "dlsched/cli/options.h"

namespace dlsched::cli {

CLI::Option* AddQuietOption(CLI::App* cmd, bool* quiet) {
  return cmd->add_flag("--quiet,-q", *quiet,
                       "Print no tables and no progress line (shown on stderr when it is a "
                       "terminal): only where the results went, and errors");
}

}  // namespace dlsched::cli
