export interface Gateway {
  charge(amount: number): boolean;
  name: string;
}

export type Id = string | number;

export enum Color {
  Red,
  Green,
}

export class Payment implements Gateway {
  name = "card";

  charge(amount: number): boolean {
    return amount > 0;
  }
}

export const double = (x: number): number => {
  return x * 2;
};

export function greet(who: string): string {
  return `hi ${who}`;
}

namespace Util {
  export function helper(): void {}
}
