#include <iostream>
int main() { std::cout << "denote\n"; }
