plugins {
    kotlin("jvm") version "2.0.21"
}

dependencies {
    testImplementation(kotlin("test"))
}
