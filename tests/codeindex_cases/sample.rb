module Billing
  RATE = 3

  class Invoice
    attr_reader :total, :items

    def initialize(total)
      @total = total
    end

    def self.build
      new(0)
    end

    def paid?
      total.zero?
    end
  end
end

def helper(x)
  x + 1
end
