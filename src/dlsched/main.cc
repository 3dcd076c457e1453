#include "dlsched/cli/cli.h"

int main(int argc, char** argv) { return dlsched::cli::Main(argc, argv); }
