#include "cli/interrupt.hpp"

#include <csignal>

namespace egret::cli {
namespace {

std::atomic<bool> g_requested{false};
std::atomic<int> g_signal{0};  // lock-free int: safe to store from a signal handler
struct sigaction g_previous_int, g_previous_term;

extern "C" void on_interrupt(int signal_number) {
  g_signal.store(signal_number);
  g_requested.store(true);
}

void install(int signal_number, struct sigaction* previous) {
  struct sigaction a {};
  a.sa_handler = on_interrupt;
  sigemptyset(&a.sa_mask);
  a.sa_flags = SA_RESETHAND;  // the second signal takes the default action: the process ends
  sigaction(signal_number, &a, previous);
}

}  // namespace

InterruptGuard::InterruptGuard() {
  static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free,
                "a signal handler may only touch lock-free atomics");
  g_requested.store(false);
  g_signal.store(0);
  install(SIGINT, &g_previous_int);
  install(SIGTERM, &g_previous_term);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
}

const std::atomic<bool>& interrupt_flag() {
  return g_requested;
}
bool interrupt_requested() {
  return g_requested.load();
}
int interrupt_signal() {
  return g_signal.load();
}

const char* signal_name(int signal_number) {
  switch (signal_number) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "a signal";
  }
}

}  // namespace egret::cli
