/* color — see color.h. */
#include "color.h"

int oc_on;
