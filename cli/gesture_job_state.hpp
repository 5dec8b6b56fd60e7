// What the DVS gesture main job keeps on disk so that `egret --resume DIR` goes on where an
// interrupted job stopped and ends with the results of a job that never stopped:
//   DIR/job.json                  the job's options (egret --resume takes them from here)
//   DIR/<model>/seed<N>/run.json  a finished run's measurements and its configuration
//   DIR/<model>/seed<N>/checkpoint.h5, training_log.csv   a run's training (cli/training_loop.hpp)
#pragma once

#include <optional>
#include <string>

#include "cli/commands.hpp"
#include "cli/gesture_report.hpp"

namespace egret::cli {

// The job's options, without those that do not change its results (--threads) or describe this
// invocation (--resume, command_line).
void write_job_options(const std::string& out_dir, const Options& options);
// The options of the job in `out_dir`, with --out set to `out_dir`. Throws, naming the file, if
// job.json is missing or malformed.
Options read_job_options(const std::string& out_dir);

// The folder of the main job that `path` (its --out folder, a file in it or in a run's folder)
// belongs to: the nearest folder with a job.json; empty if none.
std::string find_job_directory(const std::string& path);

// A finished run, with the configuration it was trained with.
void write_run_result(const std::string& run_dir, const GestureRun& run,
                      const std::string& config_text);
// The finished run in `run_dir` if its run.json exists and was trained with `config_text`.
std::optional<GestureRun> read_run_result(const std::string& run_dir,
                                          const std::string& config_text);

// A checkpoint's task (its configuration's "task"."name"; empty without one) and, for the main
// job's, which run it is ("model egret, seed 3").
std::string checkpoint_task_name(const std::string& config_text);
std::string checkpoint_task_run(const std::string& config_text);
// How to resume the main job a checkpoint file belongs to: its job folder if found.
std::string main_job_directory(const std::string& checkpoint_file);

}  // namespace egret::cli
