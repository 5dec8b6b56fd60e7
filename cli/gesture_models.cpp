#include "cli/gesture_models.hpp"

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cli/builtin_layers.hpp"
#include "events/random.hpp"

namespace egret::cli {
namespace {

GesturePipeline event_pipeline() {
  GesturePipeline p;
  p.denoise_us = 10000;
  return p;
}

GestureModel egret_model(const GestureModelSizes& sizes, const std::string& layer_json) {
  GestureModel m;
  m.pipeline = event_pipeline();
  m.name = "egret";
  m.title = "continuous EGRU, exact gradients, events";
  m.pipeline.bin_us = 5000;
  m.pipeline.coalesce = Coalesce::kSum;
  nlohmann::json layer = nlohmann::json::parse(layer_json);
  layer["units"] = sizes.egret_units;
  m.layers_json = nlohmann::json::array({layer}).dump();
  m.dense_step_ms = 5;
  m.learning_rate = 0.005;
  m.epochs = sizes.full ? 40 : 8;
  m.batch_size = 8;
  m.train_time_constants = true;
  m.activity = {0.01, 20.0};  // the cell comparison's DVS target (docs/cell_comparison.md)
  return m;
}

// The paper's pipeline: frames of event presence (max-pool of the binary 25 ms frames).
GesturePipeline frame_pipeline() {
  GesturePipeline p = event_pipeline();
  p.bin_us = 25000;
  p.coalesce = Coalesce::kBinary;
  return p;
}

// A model of two layers on the paper's frames, with the frame models' training budget.
GestureModel frame_model(const std::string& name, const std::string& title,
                         const nlohmann::json& layer, const GestureModelSizes& sizes) {
  GestureModel m;
  m.name = name;
  m.title = title;
  m.pipeline = frame_pipeline();
  m.layers_json = nlohmann::json::array({layer, layer}).dump();
  m.dense_step_ms = 25;
  m.learning_rate = 0.002;
  m.epochs = sizes.full ? 100 : 10;
  m.batch_size = 16;
  return m;
}

// One of a frame model's layers: a built-in configuration (examples/networks/) with its units.
nlohmann::json frame_layer(const char* layer_json, const GestureModelSizes& sizes) {
  nlohmann::json layer = nlohmann::json::parse(layer_json);
  layer["units"] = sizes.frame_units;
  return layer;
}

// The paper's layers start near its 5 % activity on binary frames (2.7 and 1.9 events per unit
// per second at 25 ms ticks on the default set, with the built-in layer's threshold 0.3 and
// bias_z 0.2; bias_z -0.2 leaves them silent).
GestureModel paper_model(const GestureModelSizes& sizes) {
  GestureModel m = frame_model("paper", "2x discrete EGRU, 25 ms frames (EGRU paper)",
                               frame_layer(builtin::kDvsGesturePaperLayer, sizes), sizes);
  // Eq. S54: w_v = 0.05 on the state, w_reg = 0.01 towards 5 % activity (2 Hz at 25 ms ticks).
  m.state.weight = 0.05;
  m.activity = {0.01, 2.0};
  return m;
}

// A GRU in the same engine: units whose every gate is held open update every tick (the built-in
// layer, examples/networks/dvs_gesture_dense_gru_layer.json).
GestureModel dense_gru_model(const GestureModelSizes& sizes) {
  return frame_model("dense_gru", "2x dense GRU, 25 ms frames",
                     frame_layer(builtin::kDvsGestureDenseGruLayer, sizes), sizes);
}

}  // namespace

std::vector<GestureModel> gesture_models(const GestureModelSizes& sizes,
                                         const std::string& egret_layer_json) {
  return {egret_model(sizes, egret_layer_json), paper_model(sizes), dense_gru_model(sizes)};
}

SpatialAugmentation random_augmentation(const GestureAugmentation& a, std::mt19937_64& rng) {
  auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * detail::uniform01(rng); };
  SpatialAugmentation s;
  s.rotation_rad = uniform(-a.max_rotation_deg, a.max_rotation_deg) * 3.141592653589793 / 180;
  s.zoom = uniform(1, a.max_zoom);
  s.shift_x = uniform(-a.max_shift, a.max_shift) * 128;
  s.shift_y = uniform(-a.max_shift, a.max_shift) * 128;
  return s;
}

Sample<double> gesture_sample(const GestureSample& g, const GesturePipeline& p,
                              const SpatialAugmentation* augmentation) {
  // The gesture's events start at 0 (camera/datasets/dvs_gesture.cpp), on the DVS128's sensor.
  return prepare_recording_window(g.events, {128, 128}, p, 0, g.label, std::nullopt, augmentation);
}

}  // namespace egret::cli
