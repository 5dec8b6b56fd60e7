// `egret classify`: a checkpoint's network on a camera recording, one sample per labelled window
// (DvsGesture label file) or per window of the recording, with the checkpoint's preprocessing
// (camera/recording_classifier.hpp; Python: egret.classify_recording).
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "camera/recording_classifier.hpp"
#include "cli/commands.hpp"
#include "io/event_csv.hpp"

namespace egret::cli {

int run_classify(const Args& args) {
  if (args.positional.size() != 1 || !args.options.count("--checkpoint"))
    throw std::invalid_argument(
        "classify: expected egret classify --checkpoint CKPT.h5 RECORDING [--labels LABELS.csv] "
        "[--crop X,Y,W,H] [--json OUT.json]");
  const std::string checkpoint = args.options.at("--checkpoint");
  const std::string recording = args.positional.front();
  if (args.options.count("--json")) check_output_file(args.options.at("--json"), "--json");
  ClassifyOptions options;
  if (args.options.count("--labels")) options.labels_path = args.options.at("--labels");
  if (args.options.count("--crop"))
    options.crop = parse_crop_box(args.options.at("--crop"), "--crop");
  if (args.options.count("--threads"))
    options.threads =
        static_cast<int>(parse_positive_int(args.options.at("--threads"), "--threads"));
  const auto t0 = std::chrono::steady_clock::now();
  const RecordingClassification c = classify_recording(checkpoint, recording, options);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const RecordingPreprocessing& p = c.preprocessing;
  std::printf("recording: %s (%s, %s), %llu events, %.6f .. %.6f s; first event at %lld us\n",
              recording.c_str(), c.format.c_str(), sensor_text(c.sensor).c_str(),
              static_cast<unsigned long long>(c.span.events), c.span.first_us * 1e-6,
              c.span.last_us * 1e-6, static_cast<long long>(c.span.first_us));
  std::printf("preprocessing from %s: %s\n",
              c.preprocessing_from_task ? "the checkpoint's task section"
                                        : "the defaults (the checkpoint has no task section)",
              describe_preprocessing(p, c.sensor).c_str());
  if (options.labels_path.empty())
    std::printf("windows: consecutive, from the recording's first event (%lld us)\n",
                static_cast<long long>(c.span.first_us));
  else
    std::printf("windows: one per label of %s, from its start, clipped to its end\n",
                options.labels_path.c_str());
  for (const auto& n : c.notes) std::printf("note: %s\n", n.c_str());
  std::printf("%6s %14s %14s  %-28s %-28s %7s\n", "window", "start [us]", "end [us]", "true class",
              "predicted", "p_max");
  for (std::size_t i = 0; i < c.windows.size(); ++i) {
    const WindowPrediction& w = c.windows[i];
    const std::string truth = w.window.label ? c.class_name(*w.window.label) : "-";
    const std::string predicted = c.class_name(w.predicted);
    const bool wrong = w.window.label && *w.window.label != w.predicted;
    std::printf("%6zu %14lld %14lld  %-28s %-28s %7.3f%s%s\n", i,
                static_cast<long long>(w.window.start_us), static_cast<long long>(w.window.end_us),
                truth.c_str(), predicted.c_str(), w.confidence, wrong ? "  wrong" : "",
                w.window.partial ? "  (the recording ends inside this window)" : "");
  }
  if (c.labelled > 0)
    std::printf("accuracy: %.1f%% (%d of %d labelled windows)\n", 100.0 * c.correct / c.labelled,
                c.correct, c.labelled);
  std::printf("%zu windows in %.2f s (%s)\n", c.windows.size(), wall, c.precision.c_str());
  if (args.options.count("--json")) {
    write_file_atomically(args.options.at("--json"), classification_json(c).dump(2) + "\n");
    std::printf("wrote %s\n", args.options.at("--json").c_str());
  }
  return 0;
}

}  // namespace egret::cli
