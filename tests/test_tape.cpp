// The tape's step records keep neither their item count nor the previous step of their layer
// (sim/tape.hpp): both are derived from the neighbouring steps. Checked here against what was
// recorded, on two interleaved layers with steps of 0 to 3 items.
#include <gtest/gtest.h>

#include <vector>

#include "sim/tape.hpp"

namespace {

using egret::EventKind;
using egret::Index;

TEST(Tape, ItemCountsAndPreviousStepsFollowFromTheNeighbouringSteps) {
  egret::Tape<double> tape;
  tape.clear(2);
  struct Recorded {
    Index layer;
    std::int64_t items;
  };
  const std::vector<Recorded> recorded = {{0, 1}, {1, 2}, {1, 0}, {0, 3}, {0, 1}, {1, 1}, {0, 2}};
  for (std::size_t s = 0; s < recorded.size(); ++s) {
    std::vector<egret::TapeItem<double>> items(static_cast<std::size_t>(recorded[s].items));
    for (auto& it : items) it.index = static_cast<std::int32_t>(s);
    tape.add_step(0.5 * static_cast<double>(s), EventKind::kInput, recorded[s].layer, items);
  }
  ASSERT_EQ(tape.steps.size(), recorded.size());
  for (std::size_t s = 0; s < recorded.size(); ++s) {
    const auto& st = tape.steps[s];
    EXPECT_EQ(tape.n_items(st), recorded[s].items) << "step " << s;
    for (std::int64_t k = 0; k < tape.n_items(st); ++k)
      EXPECT_EQ(tape.items_of(st)[k].index, static_cast<std::int32_t>(s));
    std::ptrdiff_t expected = -1;  // the latest earlier step of the same layer
    for (std::size_t q = 0; q < s; ++q)
      if (recorded[q].layer == recorded[s].layer) expected = static_cast<std::ptrdiff_t>(q);
    const auto* prev = tape.previous(st);
    EXPECT_EQ(prev ? prev - tape.steps.data() : -1, expected) << "step " << s;
  }
  const egret::TapeStep<double> copy = tape.steps[0];  // not a step of the tape
  EXPECT_THROW(tape.n_items(copy), std::logic_error);
}

}  // namespace
