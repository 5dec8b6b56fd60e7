#include "cli/gesture_job_state.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "io/config/network_config.hpp"
#include "io/event_csv.hpp"

namespace egret::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kJobFile = "job.json";
constexpr const char* kRunFile = "run.json";

nlohmann::json parse_json_file(const std::string& path, const char* what) {
  const std::string text = read_text_file(path, what);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not JSON: " + e.what());
  }
}

nlohmann::json parse_config(const std::string& config_text) {
  try {
    return nlohmann::json::parse(config_text);
  } catch (const nlohmann::json::exception&) {
    return nullptr;  // not JSON: no task
  }
}

}  // namespace

void write_job_options(const std::string& out_dir, const Options& options) {
  nlohmann::json j;
  j["egret_job"] = "dvs_gesture";
  nlohmann::json o = nlohmann::json::object();
  for (const auto& [key, value] : options)
    if (key != "--threads" && key != "--resume" && key != "--out" && key != "command_line")
      o[key] = value;
  j["options"] = o;
  write_file_atomically((fs::path(out_dir) / kJobFile).string(), j.dump(1) + "\n");
}

Options read_job_options(const std::string& out_dir) {
  const std::string path = (fs::path(out_dir) / kJobFile).string();
  const nlohmann::json j = parse_json_file(path, "main job settings");
  Options o;
  try {
    if (j.at("egret_job").get<std::string>() != "dvs_gesture")
      throw std::runtime_error("egret_job is not dvs_gesture");
    for (const auto& [key, value] : j.at("options").items()) o[key] = value.get<std::string>();
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": not the settings of an egret main job: " + e.what());
  }
  o["--out"] = out_dir;
  return o;
}

std::string find_job_directory(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec) return "";
  if (!fs::is_directory(p, ec)) p = p.parent_path();
  for (; !p.empty(); p = p.parent_path()) {
    if (fs::exists(p / kJobFile, ec)) return fs::relative(p, fs::current_path(), ec).string();
    if (p == p.root_path()) break;
  }
  return "";
}

void write_run_result(const std::string& run_dir, const GestureRun& run,
                      const std::string& config_text) {
  nlohmann::json j = gesture_run_json(run);
  j["configuration"] = config_text;
  write_file_atomically((fs::path(run_dir) / kRunFile).string(), j.dump(1) + "\n");
}

std::optional<GestureRun> read_run_result(const std::string& run_dir,
                                          const std::string& config_text) {
  const std::string path = (fs::path(run_dir) / kRunFile).string();
  if (!fs::exists(path)) return std::nullopt;
  const nlohmann::json j = parse_json_file(path, "finished run");
  try {
    if (j.at("configuration").get<std::string>() != config_text) return std::nullopt;
    return gesture_run_from_json(j);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": not a finished run of the main job: " + e.what());
  }
}

std::string checkpoint_task_name(const std::string& config_text) {
  const nlohmann::json c = parse_config(config_text);
  if (!c.is_object() || !c.contains("task") || !c["task"].is_object()) return "";
  const auto& t = c["task"];
  return t.contains("name") && t["name"].is_string() ? t["name"].get<std::string>() : "";
}

std::string checkpoint_task_run(const std::string& config_text) {
  const nlohmann::json c = parse_config(config_text);
  std::string run = "model ";
  const auto& t = c["task"];
  run += t.contains("model") && t["model"].is_string() ? t["model"].get<std::string>() : "?";
  if (c.contains("seed") && c["seed"].is_number_unsigned())
    run += ", seed " + std::to_string(c["seed"].get<std::uint64_t>());
  return run;
}

std::string main_job_directory(const std::string& checkpoint_file) {
  const std::string dir = find_job_directory(checkpoint_file);
  return dir.empty() ? "OUT (the job's --out folder; default out/dvs_gesture)" : dir;
}

}  // namespace egret::cli
