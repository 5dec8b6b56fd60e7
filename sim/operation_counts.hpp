// The work a layer did in a run, counted with NeuroBench's definitions (docs/metrics.md): exact
// integers, accumulated by the layer's family while it runs and summed per sample by the engine
// (sim/recorder.hpp LayerCounts). What a family counts is its own (each family's section of
// docs/metrics.md); the rules are the same for all:
//  * a synaptic operation is a pair of a nonzero weight and a nonzero operand that the family's
//    event-sparse update multiplies; an operand of exactly +1 or -1 (a binary spike) makes it an
//    accumulate (AC), any other value a multiply-accumulate (MAC); biases are never counted;
//  * an element-wise product of two state-dependent factors (a gate times a state, as NeuroBench
//    counts r (W_hn h), (1 - z) n and z h in a GRU cell) is one MAC when both are nonzero;
//    products with a constant (a leak) and selections by a binary gate are not counted;
//  * a membrane update is a (unit, step) pair in which the unit's state changed; at a tick
//    layer's first tick every unit counts (NeuroBench's MembraneUpdates). A continuous layer
//    counts, per event it handles, the units whose gate pre-activations change and the units it
//    resets.
#pragma once

#include <cstdint>

namespace egret {

// NeuroBench's Effective_MACs = synaptic_macs + gate_products, Effective_ACs = synaptic_acs.
// Synaptic pairs each read one weight; gate products read none (docs/metrics.md).
struct OperationCounts {
  std::uint64_t synaptic_macs = 0;
  std::uint64_t synaptic_acs = 0;
  std::uint64_t gate_products = 0;
  std::uint64_t membrane_updates = 0;

  std::uint64_t effective_macs() const { return synaptic_macs + gate_products; }
  std::uint64_t effective_acs() const { return synaptic_acs; }

  OperationCounts& operator+=(const OperationCounts& o) {
    synaptic_macs += o.synaptic_macs;
    synaptic_acs += o.synaptic_acs;
    gate_products += o.gate_products;
    membrane_updates += o.membrane_updates;
    return *this;
  }
  friend bool operator==(const OperationCounts& a, const OperationCounts& b) {
    return a.synaptic_macs == b.synaptic_macs && a.synaptic_acs == b.synaptic_acs &&
           a.gate_products == b.gate_products && a.membrane_updates == b.membrane_updates;
  }
};

// What the same layer would do run densely, per update step: every weight pair of every
// product (and every element-wise gate product) for every unit, whatever the activity. A tick
// layer's step is its tick; a continuous layer's dense equivalent steps at a stated interval
// (docs/metrics.md). state_words_per_unit: the state values a unit update reads and writes.
struct DenseCost {
  std::uint64_t operations_per_step = 0;
  std::uint64_t state_words_per_unit = 0;
};

}  // namespace egret
