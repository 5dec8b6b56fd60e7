// The models the DVS gesture main job compares (the EGRU paper's Table 1 analog): for each, how a
// labelled gesture becomes a sample (the pipeline), the network, and how it trains.
//   egret      the continuous-time EGRU with exact gradients on the events (5 ms bins, no frames)
//   paper      the EGRU paper's pipeline (Sec. 4.2, Suppl. D.1): 25 ms frames, 32x32 max-pool,
//              10 ms denoise filter, two discrete EGRU layers, the regularisers of Eq. S54
//   dense_gru  a dense GRU in the same engine on the paper's frames: two layers whose units
//              update every tick
// Their layers are configuration files in examples/networks/, built in (cli/builtin_layers.hpp).
// Every model sees the same augmentation (a fresh random rotation, zoom and shift of every
// training gesture each epoch) and the same held-out users.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "adjoint/activity_regularizer.hpp"
#include "adjoint/state_regularizer.hpp"
#include "camera/camera_transforms.hpp"
#include "camera/datasets/dvs_gesture.hpp"
#include "camera/recording_preprocessing.hpp"
#include "train/sample.hpp"

namespace egret::cli {

// How the events of one labelled gesture become the engine's input: the description that
// checkpoints store and `egret classify` reads (camera/recording_preprocessing.hpp). The main
// job's models all use a 10 ms denoise filter (the paper's).
using GesturePipeline = RecordingPreprocessing;

struct GestureAugmentation {
  double max_rotation_deg = 10;
  double max_zoom = 1.15;  // random crop: zoom in [1, max_zoom]
  double max_shift = 0.1;  // of the sensor's width and height
  bool enabled = true;
};

struct GestureModel {
  std::string name;   // egret, paper, dense_gru
  std::string title;  // the table's row
  GesturePipeline pipeline;
  std::string layers_json;   // a JSON array of layer configurations
  double dense_step_ms = 5;  // the dense comparison's step of event-driven layers
  double learning_rate = 0.005;
  int epochs = 12;
  int batch_size = 8;
  bool train_time_constants = false;
  StateRegularizer state;
  ActivityRegularizer activity;
};

struct GestureModelSizes {
  int egret_units = 64;  // the continuous EGRU (one layer)
  int frame_units = 64;  // each of the two layers of the frame models
  bool full = false;     // the large version (more units and epochs)
};

// The three models; `egret_layer_json` is the continuous EGRU's layer configuration (units are
// set from `sizes`).
std::vector<GestureModel> gesture_models(const GestureModelSizes& sizes,
                                         const std::string& egret_layer_json);

// One gesture through a pipeline (and, with `augmentation`, a random view of it first).
Sample<double> gesture_sample(const GestureSample& gesture, const GesturePipeline& p,
                              const SpatialAugmentation* augmentation = nullptr);

SpatialAugmentation random_augmentation(const GestureAugmentation& a, std::mt19937_64& rng);

}  // namespace egret::cli
