#include "cli/command_help.hpp"

#include <sstream>

#include "camera/datasets/synthetic_gesture_dataset.hpp"
#include "camera/formats/camera_readers.hpp"
#include "camera/recording_preprocessing.hpp"
#include "cli/builtin_layers.hpp"
#include "cli/gesture_models.hpp"
#include "io/config/network_config.hpp"
#include "io/config/train_config.hpp"
#include "io/hardware/hardware_profile.hpp"
#include "models/cell_families.hpp"

namespace egret::cli {
namespace {

constexpr std::size_t kWidth = 100;        // columns of the help text
constexpr std::size_t kOptionColumn = 32;  // where an option's text starts

std::string number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string joined(const std::vector<std::string>& items, const std::string& last_separator) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? last_separator : ", ") + items[i];
  return out;
}

// Words of `text` in lines of at most kWidth columns; the first line continues `first` (which
// is padded to `indent` when shorter), the others start with `indent` spaces.
std::string wrapped(const std::string& first, const std::string& text, std::size_t indent) {
  std::string out, line = first;
  if (line.size() < indent) line.resize(indent, ' ');
  bool line_has_text = false;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    if (line_has_text && line.size() + 1 + word.size() > kWidth) {
      out += line + "\n";
      line = std::string(indent, ' ');
      line_has_text = false;
    }
    line += (line_has_text ? " " : "") + word;
    line_has_text = true;
  }
  return out + line + "\n";
}

// The camera formats the readers accept (camera/formats/camera_readers.hpp), by name.
std::string camera_format_names() {
  std::vector<std::string> names;
  for (const auto& f : kCameraFormats) names.emplace_back(f.name);
  return joined(names, " and ");
}

// The registered cell families (models/cell_families.hpp), by type.
std::string cell_family_names() {
  std::vector<std::string> names;
  for (const CellFamily& f : cell_families()) names.push_back(f.type);
  return joined(names, " and ");
}

// The registered families whose layers export as NIR's `neuron` nodes (sim/cell_family.hpp's
// NirDescription), as "<type> layers [whose ...]".
std::string nir_family_layers(NirDescription::Neuron neuron) {
  std::vector<std::string> layers;
  for (const CellFamily& f : cell_families())
    if (f.nir.neuron == neuron)
      layers.push_back(f.type + " layers" + (f.nir.maps_when.empty() ? "" : " " + f.nir.maps_when));
  return joined(layers, " and ");
}

std::string gesture_epochs(bool full) {
  GestureModelSizes sizes;
  sizes.full = full;
  std::vector<std::string> epochs;
  for (const GestureModel& m : gesture_models(sizes, builtin::kDvsGestureLayer))
    epochs.push_back((full ? "" : m.name + " ") + std::to_string(m.epochs));
  return joined(epochs, ", ");
}

GestureModel gesture_model(const std::string& name) {
  for (const GestureModel& m : gesture_models(GestureModelSizes{}, builtin::kDvsGestureLayer))
    if (m.name == name) return m;
  return {};
}

const char* const kPrecisionText = "the scalar of the run: float or double";

CommandHelp gesture_help() {
  const GestureModelSizes sizes;
  const SyntheticGestureConfig synthetic;
  const GestureModel egret_model = gesture_model("egret");
  const std::string state = egret_model.state.weight > 0 ? number(egret_model.state.weight) : "off";
  const std::string activity =
      egret_model.activity.weight > 0
          ? number(egret_model.activity.weight) + "," + number(egret_model.activity.target_hz)
          : "off";
  return {
      "gesture",
      "  egret [gesture] [--dataset DIR] [--out DIR] [--full] [--seeds 3,4,5]\n"
      "                  [--models egret,paper,dense_gru] [--epochs N] [--threads T] "
      "[--precision P]\n"
      "                  [--units N] [--frame-units N] [--users TRAIN,TEST] "
      "[--lightings-per-user L]\n"
      "                  [--augment on|off] [--layer LAYER.json] [--state-regularizer W]\n"
      "                  [--activity-regularizer W,HZ]\n"
      "  egret [gesture] --resume DIR [--threads T]\n",
      "The main job: DVS gesture classification, the EGRU paper's Table 1 analog. Generates the "
      "synthetic DVS128 Gesture-style set (users 01-23 train, 24-29 held out, 2 lighting "
      "conditions each; not the real data; --full: all 5 conditions and larger models) if "
      "absent, or reads the real one (--dataset). Trains three models for every seed: egret (a "
      "continuous-time EGRU with exact gradients on 5 ms event bins), paper (the EGRU paper's two "
      "discrete EGRU layers on 25 ms frames, 32x32 max-pool, 10 ms denoise, its regularisers) and "
      "dense_gru (two dense GRU layers on the same frames), all with the same augmentation "
      "(rotation, zoom, shift); reports per model parameters, effective MACs/ACs, held-out "
      "accuracy (mean ± sd over seeds), activity and backward sparsity and estimated energy "
      "(Loihi, CMOS). Writes results.json, table1.csv and per model and seed checkpoint.h5, "
      "trace.h5, training_log.csv to out/dvs_gesture. Ctrl-C (or SIGTERM) keeps the finished runs "
      "and the running one's last complete epoch (exit status 130/143); --resume DIR goes on "
      "with the options in DIR/job.json and ends with the results of a job that never stopped.",
      {
          {"--dataset", "DIR",
           "the real DVS128 Gesture set: userNN_*.aedat recordings, their label files and "
           "trials_to_train.txt, trials_to_test.txt",
           "the synthetic set, generated into out/dvs_gesture_synthetic/ if absent"},
          {"--out", "DIR", "the output folder", "out/dvs_gesture"},
          {"--resume", "DIR",
           "go on with the interrupted job in DIR (its --out folder), with its options "
           "(DIR/job.json; only --threads may be given besides)",
           "none: a fresh job"},
          {"--full", "",
           "the large version: all 5 lighting conditions, a 128-unit egret model, 512-unit frame "
           "layers, " +
               gesture_epochs(true) + " epochs (hours)",
           "off"},
          {"--seeds", "LIST", "seeds, comma-separated: every model is trained once per seed",
           "3,4,5"},
          {"--models", "LIST", "the models to train, comma-separated: egret, paper, dense_gru",
           "all three"},
          {"--epochs", "N", "epochs of every model", "each model's own: " + gesture_epochs(false)},
          {"--threads", "T", "threads for training and for generating the synthetic set",
           "all cores"},
          {"--precision", "P", kPrecisionText, "float"},
          {"--units", "N", "units of the egret model", std::to_string(sizes.egret_units)},
          {"--frame-units", "N", "units of each layer of the paper and dense_gru models",
           std::to_string(sizes.frame_units)},
          {"--users", "TRAIN,TEST",
           "the synthetic set's training and held-out users, at most 23,6 (the real set's split)",
           std::to_string(synthetic.train_users) + "," + std::to_string(synthetic.test_users)},
          {"--lightings-per-user", "L", "the synthetic set's lighting conditions per user, 1-5",
           std::to_string(synthetic.lightings_per_user)},
          {"--augment", "on|off",
           "a random rotation, zoom and shift of every training gesture "
           "each epoch",
           GestureAugmentation{}.enabled ? "on" : "off"},
          {"--layer", "LAYER.json",
           "the egret model's layer configuration (--units sets its units)",
           "examples/networks/dvs_gesture_layer.json (built in)"},
          {"--state-regularizer", "W",
           "the egret model's state regulariser weight (the EGRU paper's L_act)", state},
          {"--activity-regularizer", "W,HZ",
           "the egret model's activity regulariser: weight and target events per unit per second",
           activity},
      },
      "",
      "build/egret --models egret --seeds 3 --users 4,2 --epochs 2 --out out/gesture_small",
  };
}

CommandHelp demo_help() {
  return {
      "demo",
      "  egret demo [--samples S] [--threads T] [--end-time MS] [--precision P]\n",
      "A two-layer continuous-time EGRU (32 input channels, 64 and 32 units) on a synthetic "
      "sweeping event stream, S samples in parallel: events per layer, activity, wall time, "
      "events/s.",
      {
          {"--samples", "S", "samples simulated in parallel", "8"},
          {"--threads", "T", "threads", "all cores"},
          {"--end-time", "MS", "each sample's length in ms", "1000"},
          {"--precision", "P", kPrecisionText, "float"},
      },
      "",
      "build/egret demo --samples 4 --end-time 500",
  };
}

CommandHelp simulate_help() {
  const RecordingPreprocessing p;
  const std::string from_task = " (with --checkpoint: its task section's)";
  return {
      "simulate",
      "  egret simulate (--config NET.json | --checkpoint CKPT.h5) --input EVENTS.csv|RECORDING\n"
      "                 [--trace OUT.h5|OUT.csv] [--end-time MS] [--max-events N] [--precision "
      "P]\n"
      "                 [--dump-input OUT.csv] [--window-us N] [--start-us N] [--crop X,Y,W,H]\n"
      "                 [--pooling F] [--bin-us N] [--denoise-us N] [--coalesce sum|binary]\n",
      "Simulate one input stream through a network: a configuration (--config) or a trained "
      "checkpoint's (--checkpoint, e.g. out/dvs_gesture/checkpoint.h5). The input is CSV lines "
      "`t_ms,channel[,value]`, or a window of an event-camera recording in any format egret reads "
      "(see inspect), prepared as the gesture job prepares its samples: the window of --window-us "
      "from --start-us (timestamps are the recording's own, and the summary prints them), shifted "
      "to start at 0 ms, cropped to --crop, denoised (--denoise-us), pooled by --pooling, events "
      "coalesced per channel and --bin-us bin (--coalesce: the count or 1), read out over the "
      "last 80\u00a0% (readout_from 0.2). With --checkpoint these come from its \"task\" section, "
      "and "
      "options override them (the summary says which). The pooled sensor x 2 polarities must "
      "equal the network's input channels. Prints a summary and the readouts; --trace writes "
      "every emitted event: HDF5 with SONATA spikes, values, metrics, snapshots and provenance "
      "(.h5, streamed while the run goes on), or CSV lines time_ms,layer,unit,value (.csv).",
      {
          {"--config", "NET.json", "a network configuration (required unless --checkpoint)", ""},
          {"--checkpoint", "CKPT.h5", "a trained network (required unless --config)", ""},
          {"--input", "EVENTS.csv|RECORDING",
           "CSV events (examples/events.csv) or an event-camera recording (required)", ""},
          {"--trace", "OUT.h5|OUT.csv", "write every emitted event to this file", "none"},
          {"--end-time", "MS", "the end of the run (CSV input; a recording's window is its run)",
           "the configuration's simulation.end_time"},
          {"--max-events", "N",
           "the run's event budget: a run that needs more stops with an error and writes no "
           "trace",
           "the configuration's simulation.max_events, else " +
               std::to_string(NetworkConfig{}.max_events)},
          {"--precision", "P", kPrecisionText,
           "the configuration's \"precision\", float if absent"},
          {"--dump-input", "OUT.csv", "write the prepared input (t_ms,channel,value)", "none"},
          {"--window-us", "N", "the recording's window, in microseconds",
           std::to_string(p.window_us) + from_task},
          {"--start-us", "N", "the window's start, in the recording's timestamps",
           "the recording's first event"},
          {"--crop", "X,Y,W,H", "crop the sensor first (e.g. 96,56,128,128: 128x128 of 320x240)",
           "none" + from_task},
          {"--pooling", "F", "spatial pooling factor in (0, 1]", number(p.pooling) + from_task},
          {"--bin-us", "N", "events coalesced per channel and bin of this many microseconds",
           std::to_string(p.bin_us) + from_task},
          {"--denoise-us", "N", "tonic's denoise filter time in microseconds, 0: off",
           std::to_string(p.denoise_us) + from_task},
          {"--coalesce", "sum|binary", "a bin's events become their count (sum) or 1 (binary)",
           std::string(coalesce_name(p.coalesce)) + from_task},
      },
      "",
      "build/egret simulate --config examples/two_layer.json --input examples/events.csv "
      "--trace trace.h5",
  };
}

CommandHelp classify_help() {
  return {
      "classify",
      "  egret classify --checkpoint CKPT.h5 RECORDING [--labels LABELS.csv] [--crop X,Y,W,H]\n"
      "                 [--json OUT.json] [--threads T]\n",
      "Classify a recording with a trained checkpoint (it needs a readout) and the preprocessing "
      "its \"task\" section describes: with a DvsGesture label file "
      "(class,startTime_usec,endTime_usec) one window per label, from its start, window_us long "
      "and clipped to its end; without, consecutive windows from the first event. Prints per "
      "window its start and end, the true and the predicted class (DVS gesture names) and the "
      "softmax maximum, then the accuracy; --json writes the same.",
      {
          {"--checkpoint", "CKPT.h5", "a trained network with a readout (required)", ""},
          {"--labels", "LABELS.csv", "a DvsGesture label file: one window per label",
           "consecutive windows from the first event"},
          {"--crop", "X,Y,W,H", "crop the sensor first", "the checkpoint's task section's"},
          {"--json", "OUT.json", "write the windows and predictions as JSON", "none"},
          {"--threads", "T", "windows classified in parallel", "all cores"},
      },
      "RECORDING",
      "build/egret classify --checkpoint out/dvs_gesture/checkpoint.h5 "
      "out/dvs_gesture_synthetic/v2_users23+6_lightings2_seed1/user24_fluorescent.aedat",
  };
}

CommandHelp emulate_help() {
  return {
      "emulate",
      "  egret emulate --frames IMAGES.txt --out EVENTS.aedat\n",
      "Run the DVS sensor model (contrast thresholds, refractory period, leak, shot noise) on a "
      "sequence of PNG frames listed as '<seconds> <path>' lines; write AEDAT 3.1.",
      {
          {"--frames", "IMAGES.txt",
           "the frames: '<seconds> <path>' lines, paths relative to the list; 8- or 16-bit grey "
           "PNG (required)",
           ""},
          {"--out", "EVENTS.aedat", "the AEDAT 3.1 file to write (required)", ""},
      },
      "",
      "build/egret emulate --frames examples/frames/images.txt --out events.aedat",
  };
}

CommandHelp inspect_help() {
  return {
      "inspect",
      "  egret inspect TRACE.h5 | RECORDING\n",
      "Summary of a trace file per layer (events, rate, activity sparsity, time span, and the "
      "NeuroBench counts: Effective_MACs, Effective_ACs, Dense, MembraneUpdates), or of an "
      "event-camera recording (format, sensor, events, time span, ON share) in any of these "
      "formats, found by header and extension: " +
          camera_format_names() + " (fields x, y, p, t).",
      {},
      "TRACE.h5 | RECORDING",
      "build/egret inspect events.aedat",
  };
}

CommandHelp estimate_help() {
  return {
      "estimate",
      "  egret estimate TRACE.h5 [--profile NAME|FILE] [--json OUT.json]\n",
      "Energy and latency per sample and per layer on a hardware profile. Prints a table, writes "
      "JSON with --json, adds /egret/estimates/NAME to the trace.",
      {
          {"--profile", "NAME|FILE",
           "a built-in profile (" + joined(builtin_profile_names(), " or ") +
               ") or a profile file of your own (docs/metrics.md)",
           "loihi_davies2018"},
          {"--json", "OUT.json", "write the estimate as JSON", "none"},
      },
      "TRACE.h5",
      "build/egret estimate trace.h5 --profile cmos45_horowitz2014 --json estimate.json",
  };
}

CommandHelp train_help() {
  return {
      "train",
      "  egret train --config TRAIN.json [--out DIR] [--epochs N] [--threads T] [--precision P]\n"
      "  egret train --resume DIR/checkpoint.h5 [--out DIR] [--epochs N] [--precision P]\n",
      "Train a network of any cell family (" + cell_family_names() +
          ") with a backward pass on the built-in delay-copy task (the continuous-time EGRU with "
          "exact event-based gradients, the tick families with BPTT; examples/delay_copy*.json, "
          "one per family); prints progress, writes a checkpoint, the "
          "training log, the held-out trace and the data for the figure "
          "(scripts/plot_delay_copy.py). A checkpoint is written every output.checkpoint_every "
          "epochs (default 1), after the last, and on Ctrl-C or SIGTERM (the last complete epoch; "
          "exit status 130/143, with the command that resumes); --resume continues from it bit for "
          "bit.",
      {
          {"--config", "TRAIN.json",
           "a training configuration: a network and its task, training and output sections "
           "(required unless --resume)",
           ""},
          {"--resume", "CKPT.h5",
           "continue from a checkpoint that egret train wrote (give the --epochs and "
           "--precision of the first run again: the stored configuration does not hold them)",
           "none: a fresh run of --config"},
          {"--out", "DIR", "the output folder",
           "the configuration's output.dir, else " + TrainRunConfig{}.out_dir +
               "; with --resume the checkpoint's folder"},
          {"--epochs", "N", "the last epoch (with --resume, counted from the first run's start)",
           "the configuration's training.epochs"},
          {"--threads", "T", "threads per minibatch (results do not depend on it)",
           "the configuration's training.threads, else all cores"},
          {"--precision", "P", kPrecisionText,
           "the configuration's \"precision\", float if absent"},
      },
      "",
      "build/egret train --config examples/delay_copy.json",
  };
}

const char* const kPrecisionNote =
    "  --precision float|double: the scalar of the run (default: the configuration's "
    "\"precision\",\n"
    "      float if absent; the main job: float). Double is for verification; files written "
    "hold\n"
    "      float64 either way.\n";

std::string synopsis_and_description(const CommandHelp& c) {
  return c.synopsis + wrapped("", c.description, 6);
}

bool takes_precision(const CommandHelp& c) {
  return find_option(c, "--precision") != nullptr;
}

CommandHelp export_nir_help() {
  CommandHelp c = {
      "export-nir",
      "  egret export-nir NET.json|CKPT.h5 OUT.nir [--extension]\n",
      "Write a network as a NIR graph (the Neuromorphic Intermediate Representation, HDF5): a "
      "configuration (its seeded initial values and \"params\") or a checkpoint's trained "
      "network. " +
          nir_family_layers(NirDescription::Neuron::kLif) +
          " become LI + Threshold with the soft reset as a recurrent Scale; " +
          nir_family_layers(NirDescription::Neuron::kCuba) +
          " become CubaLIF, LIF, IF, CubaLI, LI or I; the readout an LI (the output trace) and "
          "an Affine. A family NIR cannot "
          "express exactly is refused, naming what NIR lacks; nothing is approximated "
          "(docs/nir.md).",
      {
          {"--extension", "",
           "write the layers NIR cannot express as egret extension nodes (type egret.<family>, "
           "holding the layer's parameters and settings) instead of refusing them",
           "refuse them"},
      },
      "NET.json|CKPT.h5 OUT.nir",
      "build/egret export-nir examples/delay_copy_lif.json lif.nir",
  };
  c.arguments = 2;
  return c;
}

CommandHelp import_nir_help() {
  CommandHelp c = {
      "import-nir",
      "  egret import-nir IN.nir NET.json [--dt MS]\n",
      "Write the network configuration that runs a NIR graph (written by egret, Norse, snnTorch, "
      "Rockpool, ...): a chain of layers of LIF, CubaLIF, IF, LI, CubaLI, I nodes (or an LI and "
      "a Threshold) fed by Affine, Linear or Scale weights, recurrent edges, SumPool2d on the "
      "input, Flatten and nested graphs. Each node's equations are solved exactly over each tick "
      "with its input held over "
      "the tick; a recurrent edge carries the previous tick's output. Another node (a Delay, "
      "a convolution, ...) is refused, naming it and its place in the file (docs/nir.md).",
      {
          {"--dt", "MS", "the tick interval of every layer (NIR's nodes are continuous in time)",
           "the egret_dt_ms that egret writes into its graphs; required for other graphs"},
      },
      "IN.nir NET.json",
      "build/egret import-nir lif.nir lif_imported.json",
  };
  c.arguments = 2;
  return c;
}

}  // namespace

const std::vector<CommandHelp>& command_helps() {
  static const std::vector<CommandHelp> commands = {
      gesture_help(), demo_help(),     simulate_help(), classify_help(),   emulate_help(),
      inspect_help(), estimate_help(), train_help(),    export_nir_help(), import_nir_help(),
  };
  return commands;
}

const CommandHelp* find_command_help(const std::string& name) {
  for (const auto& c : command_helps())
    if (c.name == name) return &c;
  return nullptr;
}

const OptionHelp* find_option(const CommandHelp& command, const std::string& name) {
  for (const auto& o : command.options)
    if (o.name == name) return &o;
  return nullptr;
}

std::string overview_usage() {
  std::string out =
      "egret — event-driven simulator for activity-sparse recurrent networks\n\nusage:\n";
  for (const auto& c : command_helps()) out += synopsis_and_description(c);
  out += kPrecisionNote;
  out +=
      "  egret help [COMMAND] | --help\n"
      "      This overview; `egret COMMAND --help` (or -h, or egret help COMMAND): that command's\n"
      "      options with their defaults, and an example.\n"
      "  egret --version\n";
  return out;
}

std::string command_usage(const CommandHelp& c) {
  std::string out = "usage:\n" + synopsis_and_description(c);
  if (takes_precision(c)) out += kPrecisionNote;
  if (!c.options.empty()) out += "options:\n";
  for (const auto& o : c.options) {
    const std::string head = "  " + o.name + (o.value.empty() ? "" : " " + o.value);
    const std::string text =
        o.text + (o.default_value.empty() ? "" : "; default: " + o.default_value);
    out += head.size() + 1 < kOptionColumn ? wrapped(head, text, kOptionColumn)
                                           : head + "\n" + wrapped("", text, kOptionColumn);
  }
  out += "example (from the repository root):\n  " + c.example + "\n";
  return out;
}

}  // namespace egret::cli
