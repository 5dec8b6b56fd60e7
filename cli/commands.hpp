// The subcommands of the `egret` command line and the helpers they share.
#pragma once

#include <map>
#include <string>

namespace egret::cli {

using Options = std::map<std::string, std::string>;  // "--name" -> value

long parse_positive_int(const std::string& s, const char* what);
double parse_time(const std::string& s, const char* what);

// Output locations are checked before any work starts: the directory exists (or is created)
// and a file can be created in it. `what` names the option, e.g. "--out".
void check_output_directory(const std::string& dir, const std::string& what);
void check_output_file(const std::string& path, const std::string& what);

int run_train(const Options& options);
int run_gesture(const Options& options);
int run_estimate(const std::string& trace, const Options& options);

}  // namespace egret::cli
