#ifndef FAMCTL_CSODIUM_SHIM_H
#define FAMCTL_CSODIUM_SHIM_H
#include <sodium.h>
#endif
