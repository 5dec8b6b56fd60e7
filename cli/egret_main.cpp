// The `egret` command line: the parsing of arguments (each command's options are those its help
// lists, cli/command_help.cpp), the help, and the dispatch to the commands (one file each:
// cli/*_command.cpp).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/command_help.hpp"
#include "cli/commands.hpp"
#include "cli/interrupt.hpp"
#include "sim/precision_cast.hpp"

namespace {

using egret::cli::CommandHelp;

bool is_help(const std::string& arg) {
  return arg == "--help" || arg == "-h";
}

// The command line of `command`: the options its help lists (those with a value take the next
// argument; flags such as --full are stored with the value "1"), at most the positional
// arguments it names, and --help / -h anywhere (stored as "--help"). Anything else is refused
// with the command's name.
egret::cli::Args parse_args(int argc, char** argv, int first, const CommandHelp& command) {
  egret::cli::Args a;
  a.command = command.name;
  const std::string see = " (see egret " + command.name + " --help)";
  for (int i = first; i < argc; ++i) {
    const std::string key = argv[i];
    if (is_help(key)) {
      a.options["--help"] = "1";
      continue;
    }
    if (key.rfind("--", 0) != 0) {
      if (command.argument.empty() || a.positional.size() >= command.arguments)
        throw std::invalid_argument("unexpected argument '" + key + "'" + see);
      a.positional.push_back(key);
      continue;
    }
    const egret::cli::OptionHelp* option = egret::cli::find_option(command, key);
    if (!option)
      throw std::invalid_argument("unknown option '" + key + "' for egret " + command.name + see);
    if (option->value.empty()) {
      a.options[key] = "1";
      continue;
    }
    if (i + 1 >= argc || is_help(argv[i + 1])) {
      if (i + 1 < argc) continue;  // `--config --help`: the help
      throw std::invalid_argument("option " + key + " needs a value (" + option->value + ")");
    }
    a.options[key] = argv[++i];
  }
  return a;
}

}  // namespace

namespace egret::cli {

std::string program_name(const Options& options) {
  const auto it = options.find("command_line");
  if (it == options.end() || it->second.empty()) return "egret";
  return it->second.substr(0, it->second.find(' '));
}

long parse_positive_int(const std::string& s, const char* what) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (end != s.c_str() + s.size() || v <= 0)
    throw std::invalid_argument(std::string(what) + " must be a positive integer, got '" + s + "'");
  return v;
}

double parse_nonnegative(const std::string& s, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !(v >= 0) || !std::isfinite(v))
    throw std::invalid_argument(std::string(what) + " must be a finite number >= 0, got '" + s +
                                "'");
  return v;
}

double parse_time(const std::string& s, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !(v >= 0) || !std::isfinite(v))
    throw std::invalid_argument(std::string(what) + " must be a finite time >= 0, got '" + s + "'");
  return v;
}

namespace {

// Fails unless files can be created in the existing directory `dir`.
void check_directory_takes_files(const std::string& dir, const std::string& what) {
  namespace fs = std::filesystem;
  const std::string probe =
      (fs::path(dir) / (".egret-write-test-" + std::to_string(::getpid()))).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    throw std::runtime_error(what + " " + dir +
                             ": cannot create files in it: " + std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace

void check_output_directory(const std::string& dir, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir))
    throw std::runtime_error(what + " " + dir + ": cannot create the directory" +
                             (ec ? ": " + ec.message() : std::string(" (a file is in the way)")));
  check_directory_takes_files(dir, what);
}

void check_output_file(const std::string& path, const std::string& what) {
  namespace fs = std::filesystem;
  if (path.empty()) throw std::invalid_argument(what + ": empty path");
  if (fs::is_directory(path)) throw std::runtime_error(what + " " + path + ": is a directory");
  const fs::path parent = fs::path(path).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  std::error_code ec;
  if (!fs::exists(dir, ec))  // a mistyped path makes no folders: only run directories are made
    throw std::runtime_error(what + " " + path + ": the folder " + dir + " does not exist");
  if (!fs::is_directory(dir, ec))
    throw std::runtime_error(what + " " + path + ": " + dir + " is not a folder");
  check_directory_takes_files(dir, what);
}

}  // namespace egret::cli

int main(int argc, char** argv) {
  try {
    const std::string first = argc >= 2 ? argv[1] : "";
    if (first == "--version") {
      std::cout << "egret " << EGRET_VERSION << "\n";
      return 0;
    }
    if (is_help(first) || (first == "help" && argc == 2)) {
      std::cout << egret::cli::overview_usage();
      return 0;
    }
    // `egret help COMMAND` is `egret COMMAND --help`; `egret --seeds 3` is the main job.
    const bool help_command = first == "help";
    const std::string name = help_command                         ? argv[2]
                             : (first.empty() || first[0] == '-') ? "gesture"
                                                                  : first;
    const CommandHelp* command = egret::cli::find_command_help(name);
    if (!command) throw std::invalid_argument("unknown command '" + name + "' (see egret --help)");
    const int options_from = help_command ? 3 : (name == first ? 2 : 1);
    const egret::cli::Args args = parse_args(argc, argv, options_from, *command);
    if (help_command || args.options.count("--help")) {
      std::cout << egret::cli::command_usage(*command);
      return 0;
    }
    std::string command_line;
    for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
    auto with_command_line = [&] {
      auto options = args.options;
      options["command_line"] = command_line;
      return options;
    };
    if (args.command == "gesture") return egret::cli::run_gesture(with_command_line());
    if (args.command == "demo") return egret::cli::run_demo(args);
    if (args.command == "simulate") return egret::cli::run_simulate(args, command_line);
    if (args.command == "inspect") return egret::cli::run_inspect(args);
    if (args.command == "classify") return egret::cli::run_classify(args);
    if (args.command == "estimate") {
      if (args.positional.size() != 1)
        throw std::invalid_argument("estimate: expected one trace file (egret estimate TRACE.h5)");
      return egret::cli::run_estimate(args.positional.front(), args.options);
    }
    if (args.command == "emulate") return egret::cli::run_emulate(args);
    if (args.command == "train") return egret::cli::run_train(with_command_line());
    if (args.command == "export-nir") return egret::cli::run_export_nir(args);
    if (args.command == "import-nir") return egret::cli::run_import_nir(args);
    throw std::logic_error("command '" + args.command + "' has help but no implementation");
  } catch (const egret::cli::Interrupted& e) {  // saved and explained: the usual exit status
    return 128 + e.signal;
  } catch (const std::exception& e) {
    std::cerr << "egret: error: " << e.what() << "\n";
    return 1;
  }
}
