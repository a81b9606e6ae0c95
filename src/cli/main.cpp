#include <iostream>
#include "counterpoint/core/version.h"
int main() { std::cout << "counterpoint " << counterpoint::version() << "\n"; return 0; }
