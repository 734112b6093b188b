// SPDX-License-Identifier: GPL-2.0
/* One of the large-text helper modules: see ktext_big.h. */
#include "ktext_big.h"
