// Ctrl-C (SIGINT) and SIGTERM during training: while an InterruptGuard lives, the first such
// signal only sets a flag, which the training loop polls between minibatches; it then writes a
// resumable checkpoint of the last complete epoch and throws Interrupted, and main exits with the
// conventional status 128 + signal. The handler resets itself, so a second Ctrl-C ends the
// process at once (files are written under temporary names, so none is left half-written).
#pragma once

#include <atomic>
#include <stdexcept>
#include <string>

namespace egret::cli {

class InterruptGuard {
 public:
  InterruptGuard();   // installs the handlers (and clears an earlier request)
  ~InterruptGuard();  // restores the previous ones
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
};

// Set by the handler; polled by Trainer::train_epoch between minibatches.
const std::atomic<bool>& interrupt_flag();
bool interrupt_requested();
int interrupt_signal();               // the signal received (0: none)
const char* signal_name(int signal);  // "SIGINT", "SIGTERM"

// Thrown once the interrupted work has been saved; main turns it into exit status 128 + signal.
struct Interrupted : std::runtime_error {
  explicit Interrupted(int signal_number)
      : std::runtime_error(std::string("interrupted by ") + signal_name(signal_number)),
        signal(signal_number) {}
  int signal;
};

}  // namespace egret::cli
