// The commands of the `egret` command line as data: each command's synopsis, description,
// options (with their defaults) and one example. The one source of `egret --help`, of
// `egret COMMAND --help` and of the options the parser accepts for each command, so that the
// help cannot name an option the parser refuses, nor the parser take one the help leaves out.
#pragma once

#include <string>
#include <vector>

namespace egret::cli {

struct OptionHelp {
  std::string name;           // "--samples"
  std::string value;          // its value's placeholder, e.g. "S"; empty: a flag (--full)
  std::string text;           // what it does
  std::string default_value;  // as printed after "default: "; empty: none (e.g. required)
};

struct CommandHelp {
  std::string name;         // "gesture": the main job, which `egret` alone also runs
  std::string synopsis;     // the "  egret ..." lines, wrapped by hand
  std::string description;  // one paragraph, wrapped when printed
  std::vector<OptionHelp> options;
  std::string argument;       // the positional arguments, e.g. "TRACE.h5"; empty: none
  std::string example;        // one command line that runs from the repository root
  std::size_t arguments = 1;  // how many positional arguments `argument` names
};

// Every command, in the order of `egret --help`.
const std::vector<CommandHelp>& command_helps();
// The command of that name, or nullptr.
const CommandHelp* find_command_help(const std::string& name);
// The option of that name, or nullptr.
const OptionHelp* find_option(const CommandHelp& command, const std::string& name);

// `egret --help`: every command's synopsis and description, and how to get one command's help.
std::string overview_usage();
// `egret COMMAND --help`: its synopsis and description, its options with their defaults, an
// example.
std::string command_usage(const CommandHelp& command);

}  // namespace egret::cli
