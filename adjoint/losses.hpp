// Losses on the readout logits (logits_j = W_o o(t_j) + b_o at the readout times t_j), with
// their gradients dL/dlogits_j. Every loss is a mean over readouts (and over outputs for the
// element-wise losses), so its scale does not depend on how many readouts a task uses.
//   softmax cross-entropy:  L = mean_j -log softmax(logits_j)[label_j]
//   binary cross-entropy:   L = mean_{j,k} -[t log s + (1 - t) log(1 - s)],  s = sigmoid(logit)
//   mean squared error:     L = mean_{j,k} (logit - t)^2
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/recorder.hpp"

namespace egret {

enum class LossKind { kSoftmaxCrossEntropy, kBinaryCrossEntropy, kMeanSquaredError };

// Old loss names that users' code and configurations still use (issue 38), with the current name.
// Each is accepted for one release (with a warning the caller shows its user), then removed.
struct RenamedLoss {
  const char* old_name;
  const char* new_name;
};
inline constexpr RenamedLoss kRenamedLosses[] = {{"cross_entropy", "softmax_cross_entropy"}};

// The current name for a renamed loss, or nullptr when `name` was not renamed.
inline const char* renamed_loss(const std::string& name) {
  for (const auto& r : kRenamedLosses)
    if (name == r.old_name) return r.new_name;
  return nullptr;
}

// The warning shown when a deprecated loss name is used; `where` says where it was given.
inline std::string renamed_loss_warning(const std::string& where, const std::string& name) {
  return where + ": the loss '" + name + "' is deprecated; use '" + renamed_loss(name) +
         "' (the old name is accepted until the next release)";
}

// Parses a current loss name; a renamed one is parsed as its new name (callers warn first).
inline LossKind parse_loss_kind(const std::string& given) {
  const char* renamed = renamed_loss(given);
  const std::string name = renamed ? renamed : given;
  if (name == "softmax_cross_entropy") return LossKind::kSoftmaxCrossEntropy;
  if (name == "binary_cross_entropy") return LossKind::kBinaryCrossEntropy;
  if (name == "mean_squared_error") return LossKind::kMeanSquaredError;
  throw std::invalid_argument("unknown loss '" + given +
                              "' (known: softmax_cross_entropy, binary_cross_entropy, "
                              "mean_squared_error)");
}

// Targets per readout: a class label (softmax cross-entropy) or a vector of targets, one per
// logit (binary cross-entropy: in [0, 1]; mean squared error: any finite value).
template <class Scalar>
struct ReadoutTargets {
  std::vector<int> labels;
  std::vector<std::vector<Scalar>> values;
};

template <class Scalar>
struct LossResult {
  Scalar loss = 0;
  std::vector<std::vector<Scalar>> dlogits;  // per readout
  int correct = 0;  // readouts whose argmax is the label (softmax) / bits right (binary)
  int total = 0;
};

template <class Scalar>
LossResult<Scalar> evaluate_loss(LossKind kind, const std::vector<ReadoutRecord<Scalar>>& readouts,
                                 const ReadoutTargets<Scalar>& targets) {
  LossResult<Scalar> r;
  const std::size_t n_readouts = readouts.size();
  if (n_readouts == 0) throw std::invalid_argument("loss: the run has no readouts");
  r.dlogits.resize(n_readouts);
  for (const auto& ro : readouts)
    if (ro.logits.empty())
      throw std::invalid_argument("loss: the network has no readout layer (readout_classes = 0)");
  if (kind == LossKind::kSoftmaxCrossEntropy) {
    if (targets.labels.size() != n_readouts)
      throw std::invalid_argument("softmax cross-entropy: " + std::to_string(n_readouts) +
                                  " readouts but " + std::to_string(targets.labels.size()) +
                                  " labels");
    for (std::size_t j = 0; j < n_readouts; ++j) {
      const auto& lg = readouts[j].logits;
      const int label = targets.labels[j];
      if (label < 0 || label >= static_cast<int>(lg.size()))
        throw std::invalid_argument("softmax cross-entropy: label " + std::to_string(label) +
                                    " out of range [0, " + std::to_string(lg.size()) + ")");
      const Scalar mx = *std::max_element(lg.begin(), lg.end());
      Scalar sum = 0;
      for (Scalar v : lg) sum += std::exp(v - mx);
      r.loss += -(lg[static_cast<std::size_t>(label)] - mx - std::log(sum));
      r.dlogits[j].resize(lg.size());
      for (std::size_t k = 0; k < lg.size(); ++k)
        r.dlogits[j][k] = (std::exp(lg[k] - mx) / sum - (static_cast<int>(k) == label ? 1 : 0)) /
                          static_cast<Scalar>(n_readouts);
      const auto arg = std::max_element(lg.begin(), lg.end()) - lg.begin();
      r.correct += arg == label ? 1 : 0;
      ++r.total;
    }
    r.loss /= static_cast<Scalar>(n_readouts);
    return r;
  }
  if (targets.values.size() != n_readouts)
    throw std::invalid_argument("loss: " + std::to_string(n_readouts) + " readouts but " +
                                std::to_string(targets.values.size()) + " target vectors");
  std::size_t count = 0;
  for (std::size_t j = 0; j < n_readouts; ++j) {
    if (targets.values[j].size() != readouts[j].logits.size())
      throw std::invalid_argument("loss: target vector " + std::to_string(j) + " has " +
                                  std::to_string(targets.values[j].size()) + " entries, logits " +
                                  std::to_string(readouts[j].logits.size()));
    count += readouts[j].logits.size();
  }
  for (std::size_t j = 0; j < n_readouts; ++j) {
    const auto& lg = readouts[j].logits;
    r.dlogits[j].resize(lg.size());
    for (std::size_t k = 0; k < lg.size(); ++k) {
      const Scalar t = targets.values[j][k];
      if (!std::isfinite(t)) throw std::invalid_argument("loss: target is not finite");
      if (kind == LossKind::kBinaryCrossEntropy) {
        if (t < 0 || t > 1)
          throw std::invalid_argument("binary cross-entropy: target outside [0, 1]");
        // -[t log s + (1 - t) log(1 - s)] = softplus(x) - t x, computed stably.
        const Scalar x = lg[k];
        const Scalar softplus = std::max(x, Scalar(0)) + std::log1p(std::exp(-std::abs(x)));
        r.loss += softplus - t * x;
        const Scalar s = Scalar(1) / (Scalar(1) + std::exp(-x));
        r.dlogits[j][k] = (s - t) / static_cast<Scalar>(count);
        r.correct += ((x > 0) == (t > Scalar(0.5))) ? 1 : 0;
      } else {
        const Scalar e = lg[k] - t;
        r.loss += e * e;
        r.dlogits[j][k] = 2 * e / static_cast<Scalar>(count);
      }
      ++r.total;
    }
  }
  r.loss /= static_cast<Scalar>(count);
  return r;
}

}  // namespace egret
