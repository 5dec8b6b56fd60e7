// The subcommands of the `egret` command line and the helpers they share.
#pragma once

#include <map>
#include <string>

namespace egret::cli {

using Options = std::map<std::string, std::string>;  // "--name" -> value

long parse_positive_int(const std::string& s, const char* what);
double parse_time(const std::string& s, const char* what);

int run_train(const Options& options);
int run_gesture(const Options& options);

}  // namespace egret::cli
