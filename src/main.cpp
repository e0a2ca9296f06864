// The `loopr` executable: the CLI, and `loopr daemon` the service. All the work is in the
// modules; this only hands over the arguments.
#include <loopr/cli/app.hpp>

int main(int argc, char** argv) { return loopr::cli::run(argc, argv); }
