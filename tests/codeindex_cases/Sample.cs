using System;

namespace Demo
{
    public interface IGateway
    {
        bool Charge(int amount);
    }

    public struct Point
    {
        public int X;
    }

    public enum Color { Red, Green }

    public class Payment : IGateway
    {
        private int count;

        public string Name { get; set; }

        public Payment(int count)
        {
            this.count = count;
        }

        public bool Charge(int amount)
        {
            return amount > 0;
        }
    }

    public record Person(string First, string Last);
}
