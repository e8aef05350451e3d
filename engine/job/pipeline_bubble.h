// A pipeline's bubble: the share of a step its stages sit idle. GPipe's paper gives
// (p − 1)/(m + p − 1) for p equal stages and m micro-batches; a run measures it as its
// ranks' mean time blocked on a neighbour over the training time.
#pragma once

namespace ranklab {

inline double bubbleFormula(int stages, int microbatches) {
  return static_cast<double>(stages - 1) / static_cast<double>(microbatches + stages - 1);
}

inline double measuredBubble(double mean_wait_s, double train_s) {
  return train_s > 0 ? mean_wait_s / train_s : 0;
}

}  // namespace ranklab
