//===- AttentionApiVariants.h - variant cases of tile-gpu-attention-api -*- C++ -*-===//
#pragma once

#include "tile/Runtime.h"

/// Runs the variant cases (AttentionApiVariants.cpp); returns the failures.
int runAttentionVariantCases(const tile::Device &dev);
