// The registration of the selective-update spiking layer (models/su_snn/su_snn_cell.hpp): its
// configuration keys and factory.
#include "models/su_snn/su_snn_family.hpp"

#include <map>
#include <memory>
#include <string>

#include "models/lif/lif_family.hpp"
#include "models/rhythmic_gate/rhythmic_gate_settings.hpp"
#include "models/su_snn/su_snn_cell.hpp"
#include "models/tick/tick_layer.hpp"

namespace egret {
namespace {

template <class Scalar>
std::unique_ptr<Layer<Scalar>> make_su_snn(const LayerRecipe& r) {
  using P = SuSnnParams<Scalar>;
  typename P::RandomInit init;
  read_lif_init(r.settings, init);
  read_rhythmic_gate_settings(r, init);
  P p = P::random(r.units, r.inputs, r.seed, init);
  read_lif_settings(r.settings, p);
  p.slope = r.settings.as<Scalar>("surrogate.slope");
  p.validate(r.name);
  return std::make_unique<TickLayer<Scalar, SuSnnCell>>(std::make_shared<const P>(std::move(p)));
}

// What NIR lacks for an su-SNN layer (docs/nir.md): nothing when its gates never close (every
// unit's g_b above the sum of its |g_alpha|: the gate's argument stays positive at every time),
// so that it is a LIF layer; otherwise the rhythmic gate.
std::string su_snn_nir_lacks(const std::map<std::string, Eigen::MatrixXd>& params) {
  const Eigen::MatrixXd& b = params.at("g_b");
  const Eigen::MatrixXd& alpha = params.at("g_alpha");
  for (Eigen::Index n = 0; n < b.rows(); ++n)
    if (!(b(n, 0) > alpha.row(n).cwiseAbs().sum()))
      return "NIR has no gate that stops a neuron's integration on a time schedule (su-SNN's "
             "rhythmic gate): unit " +
             std::to_string(n) + "'s gate can close (g_b = " + std::to_string(b(n, 0)) +
             " is not above the sum of its |g_alpha|, " +
             std::to_string(alpha.row(n).cwiseAbs().sum()) +
             "); an su-SNN whose gates never close exports as LIF";
  return "";
}

}  // namespace

CellFamily su_snn_family() {
  CellFamily f;
  f.type = "su_snn";
  f.summary = "selective-update spiking layer (suRNN paper): rhythmic gates over LIF integration";
  f.keys = lif_keys();
  for (auto& k : rhythmic_gate_keys()) f.keys.push_back(k);
  f.make_double = &make_su_snn<double>;
  f.make_float = &make_su_snn<float>;
  f.nir.neuron = NirDescription::Neuron::kLif;  // when its gates never close
  f.nir.spikes = true;
  f.nir.lacks_for = &su_snn_nir_lacks;
  f.nir.maps_when = "whose gates never close";
  return f;
}

}  // namespace egret
