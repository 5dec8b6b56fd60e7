// The subcommands of the `egret` command line and the helpers they share.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace egret::cli {

using Options = std::map<std::string, std::string>;  // "--name" -> value

// A parsed command line: the command, its positional arguments, its options.
struct Args {
  std::string command;
  std::vector<std::string> positional;  // arguments after the command that are not options
  Options options;
};

// The egret command as the user invoked it (the command line's first word, e.g. build/egret;
// "egret" without one), for commands printed to be copied, such as how to resume.
std::string program_name(const Options& options);

long parse_positive_int(const std::string& s, const char* what);
double parse_time(const std::string& s, const char* what);
double parse_nonnegative(const std::string& s, const char* what);

// Output locations are checked before any work starts, `what` naming the option (e.g. "--out"):
// a run directory is created if absent; an output file's folder must exist (a mistyped path is
// an error naming the folder, not a new folder). Either must take new files.
void check_output_directory(const std::string& dir, const std::string& what);
void check_output_file(const std::string& path, const std::string& what);

int run_demo(const Args& args);
int run_simulate(const Args& args, const std::string& command_line);
int run_inspect(const Args& args);
int run_classify(const Args& args);
int run_emulate(const Args& args);
int run_train(const Options& options);
int run_gesture(const Options& options);
int run_estimate(const std::string& trace, const Options& options);
int run_export_nir(const Args& args);
int run_import_nir(const Args& args);

}  // namespace egret::cli
